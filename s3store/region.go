package s3store

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
)

// regionHint explains a 301 or 400 that S3 gives when the bucket is in
// another region than s3.region: it names the bucket's region, from the
// response's x-amz-bucket-region header, and the key to set. It returns
// nil for any other error.
func (s *S3) regionHint(err error) error {
	var re *awshttp.ResponseError
	if !errors.As(err, &re) || re.Response == nil {
		return nil
	}
	status := re.HTTPStatusCode()
	if status != http.StatusMovedPermanently && status != http.StatusBadRequest {
		return nil
	}
	region := re.Response.Header.Get("X-Amz-Bucket-Region")
	if region != "" && region != s.cfg.Region {
		return fmt.Errorf("bucket %q is in region %s, not in s3.region %q: set s3.region=%s: %w", s.cfg.Bucket, region, s.cfg.Region, region, err)
	}
	var ae smithy.APIError
	if region == "" && errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "PermanentRedirect", "AuthorizationHeaderMalformed", "IllegalLocationConstraintException":
			return fmt.Errorf("bucket %q is not in s3.region %q (%s): set s3.region to the bucket's region: %w", s.cfg.Bucket, s.cfg.Region, ae.ErrorCode(), err)
		}
	}
	return nil
}

// sseHint explains S3's 400 InvalidRequest for a read of an object stored
// with SSE-C by a store that has no customer key; nil for other errors.
func (s *S3) sseHint(err error) error {
	var ae smithy.APIError
	if s.cfg.CustomerKey != "" || !errors.As(err, &ae) || ae.ErrorCode() != "InvalidRequest" ||
		!strings.Contains(ae.ErrorMessage(), "Server Side Encryption") {
		return nil
	}
	return fmt.Errorf("the object is encrypted with a customer key (SSE-C): set s3.sse.customer.key to the key it was written with: %w", err)
}
