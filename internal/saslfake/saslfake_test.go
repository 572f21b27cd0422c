package saslfake

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	saslaws "github.com/twmb/franz-go/pkg/sasl/aws"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
)

func TestOAuthToken(t *testing.T) {
	_, msg, err := oauth.Auth{Token: "tok.en.x", Extensions: map[string]string{"a": "1"}}.AsMechanism().Authenticate(context.Background(), "h:1")
	if err != nil {
		t.Fatal(err)
	}
	tok, ext, err := OAuthToken(msg)
	if err != nil || tok != "tok.en.x" || ext["a"] != "1" {
		t.Errorf("OAuthToken = %q %v %v", tok, ext, err)
	}
	for _, bad := range []string{"", "n,,\x01auth=Basic x\x01\x01", "n,,\x01a=1\x01\x01", "y,,\x01auth=Bearer t\x01\x01"} {
		if _, _, err := OAuthToken([]byte(bad)); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}

// TestVerifyMSKIAM: a payload signed by franz-go verifies, and changing
// any signed part of it (or verifying with another secret, region or
// host) does not.
func TestVerifyMSKIAM(t *testing.T) {
	creds := aws.Credentials{AccessKeyID: "AKID", SecretAccessKey: "secret", SessionToken: "tok"}
	t.Setenv("AWS_REGION", "eu-central-1")
	_, payload, err := saslaws.Auth{AccessKey: creds.AccessKeyID, SecretKey: creds.SecretAccessKey, SessionToken: creds.SessionToken}.
		AsManagedStreamingIAMMechanism().Authenticate(context.Background(), "broker.local:9098")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if _, err := VerifyMSKIAM(payload, "broker.local", "eu-central-1", creds, now); err != nil {
		t.Fatalf("franz-go's payload: %v", err)
	}
	other := creds
	other.SecretAccessKey = "other"
	for name, check := range map[string]func() error{
		"other secret": func() error { _, err := VerifyMSKIAM(payload, "broker.local", "eu-central-1", other, now); return err },
		"other region": func() error { _, err := VerifyMSKIAM(payload, "broker.local", "us-east-1", creds, now); return err },
		"other host":   func() error { _, err := VerifyMSKIAM(payload, "other.local", "eu-central-1", creds, now); return err },
		"an hour late": func() error {
			_, err := VerifyMSKIAM(payload, "broker.local", "eu-central-1", creds, now.Add(time.Hour))
			return err
		},
		"changed date": func() error {
			var p map[string]string
			_ = json.Unmarshal(payload, &p)
			d, _ := time.Parse("20060102T150405Z", p["x-amz-date"])
			p["x-amz-date"] = d.Add(time.Second).Format("20060102T150405Z")
			b, _ := json.Marshal(p)
			_, err := VerifyMSKIAM(b, "broker.local", "eu-central-1", creds, now)
			return err
		},
	} {
		if err := check(); err == nil {
			t.Errorf("%s: verified", name)
		} else if !strings.Contains(err.Error(), "payload") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
