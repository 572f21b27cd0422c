package config

import (
	"strings"
	"testing"
)

// TestBucketNameRules checks each S3 bucket naming rule on a name that
// breaks it only, and names S3 accepts.
func TestBucketNameRules(t *testing.T) {
	for name, want := range map[string]string{
		"ab":                      "is 2 characters long; want 3 to 63",
		strings.Repeat("a", 64):   "is 64 characters long; want 3 to 63",
		"Bad_Bucket!":             `has 'B'; want only lowercase letters, digits, '.' and '-'`,
		"my_bucket":               `has '_'`,
		"my bucket":               `has ' '`,
		"a/b":                     `has '/'`,
		"-bucket":                 "does not start and end with a lowercase letter or digit",
		"bucket.":                 "does not start and end with a lowercase letter or digit",
		"my..bucket":              "has two adjacent periods",
		"192.168.5.4":             "is formatted as an IP address",
		"xn--bucket":              "starts with the reserved prefix xn--",
		"sthree-bucket":           "starts with the reserved prefix sthree-",
		"sthree-configurator-b":   "starts with the reserved prefix sthree-",
		"amzn-s3-demo-bucket":     "starts with the reserved prefix amzn-s3-demo-",
		"bucket-s3alias":          "ends with the reserved suffix -s3alias",
		"bucket--ol-s3":           "ends with the reserved suffix --ol-s3",
		"bucket.mrap":             "ends with the reserved suffix .mrap",
		"bucket--x-s3":            "ends with the reserved suffix --x-s3",
		"bucket--table-s3":        "ends with the reserved suffix --table-s3",
		"abc":                     "",
		strings.Repeat("a", 63):   "",
		"docexamplebucket1":       "",
		"log-delivery-march-2020": "",
		"my.example.s3.bucket":    "",
		"192.168.5.4.example":     "",
		"kafkas3-test-1-a1b2c3":   "",
		"0bucket9":                "",
	} {
		if got := bucketNameProblem(name); !strings.HasPrefix(got, want) || (want == "") != (got == "") {
			t.Errorf("bucketNameProblem(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestBucketNameInOnePass: a bucket name S3 refuses is reported at load
// time with the key, the value and the rule, together with the other
// problems; with store.local.dir the bucket is not used and not checked.
func TestBucketNameInOnePass(t *testing.T) {
	err := sinkErr(t, minimalYAML, "s3.bucket.name=Bad_Bucket!", "flush.size=abc")
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		"2 configuration problems:",
		`s3.bucket.name: "Bad_Bucket!" has 'B'; want only lowercase letters, digits, '.' and '-'; S3 bucket names are 3 to 63 characters`,
		"(from -p s3.bucket.name)",
		`flush.size: "abc" is not an integer`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if err := sinkErr(t, minimalYAML, "s3.bucket.name=Bad_Bucket!", "store.local.dir="+t.TempDir()); err != nil {
		t.Errorf("local store: %v", err)
	}
}
