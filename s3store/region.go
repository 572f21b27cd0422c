package s3store

import (
	"errors"
	"fmt"
	"net/http"

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
