package config

import (
	"fmt"
	"net/netip"
	"strings"
)

// bucketNameRules is the whole of S3's naming rule for general purpose
// buckets, for error messages.
const bucketNameRules = "S3 bucket names are 3 to 63 characters of lowercase letters, digits, '.' and '-', start and end with a letter or digit, have no '..', are not an IP address, and do not start with xn--, sthree- or amzn-s3-demo- nor end with -s3alias, --ol-s3, .mrap, --x-s3 or --table-s3"

// bucketNameProblem returns the first S3 bucket naming rule that name
// breaks, as "has ..."/"is ..." text, or "" when S3 accepts the name.
func bucketNameProblem(name string) string {
	if n := len(name); n < 3 || n > 63 {
		return fmt.Sprintf("is %d characters long; want 3 to 63", n)
	}
	for _, r := range name {
		if !isBucketChar(r) {
			return fmt.Sprintf("has %q; want only lowercase letters, digits, '.' and '-'", r)
		}
	}
	if !isLowerAlnum(name[0]) || !isLowerAlnum(name[len(name)-1]) {
		return "does not start and end with a lowercase letter or digit"
	}
	if strings.Contains(name, "..") {
		return "has two adjacent periods"
	}
	if addr, err := netip.ParseAddr(name); err == nil && addr.Is4() {
		return "is formatted as an IP address"
	}
	// The affixes AWS reserves (punycode, access point aliases, Object
	// Lambda, Multi-Region Access Points, directory and table buckets), from
	// "General purpose bucket naming rules" of the Amazon S3 user guide.
	for _, pre := range []string{"xn--", "sthree-", "amzn-s3-demo-"} {
		if strings.HasPrefix(name, pre) {
			return "starts with the reserved prefix " + pre
		}
	}
	for _, suf := range []string{"-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"} {
		if strings.HasSuffix(name, suf) {
			return "ends with the reserved suffix " + suf
		}
	}
	return ""
}

func isBucketChar(r rune) bool {
	return (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '.' || r == '-'
}

func isLowerAlnum(b byte) bool { return (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') }
