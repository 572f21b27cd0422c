package s3store

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
)

// certificateError reports whether err is a failed verification of the
// store's TLS certificate. Repeating the request cannot pass it, so the
// store does not retry it (isRetryable) and the sink does not wait for it
// as for an outage (Transient).
func certificateError(err error) bool {
	var cve *tls.CertificateVerificationError
	return errors.As(err, &cve)
}

// tlsHint explains a failed verification of the store's certificate and
// names the endpoint; nil for other errors. A certificate of an unknown
// authority is what a store with a private CA presents to a client that
// has not been told to trust that CA: the SDK's AWS_CA_BUNDLE (or
// ca_bundle in the AWS config profile) does that.
func (s *S3) tlsHint(err error) error {
	if !certificateError(err) {
		return nil
	}
	var unknown x509.UnknownAuthorityError
	if errors.As(err, &unknown) {
		return fmt.Errorf("TLS: the store at %s presents a certificate signed by an unknown authority; "+
			"for a private CA set AWS_CA_BUNDLE (or ca_bundle in the AWS config profile) to its PEM file: %w", s.where, err)
	}
	return fmt.Errorf("TLS: the certificate of the store at %s is not valid for it: %w", s.where, err)
}
