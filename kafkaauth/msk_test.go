package kafkaauth

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/kafkas3/kafkas3/internal/saslfake"
)

// TestMSKIAMSignedPayload: the AWS_MSK_IAM payload a client sends is
// signed with the credentials of the default chain (here the environment)
// for the region of AWS_REGION (the fake broker's host is 127.0.0.1), and
// its signature equals aws-sdk-go-v2's own SigV4 presigning of the same
// request; a payload signed with other credentials is refused.
func TestMSKIAMSignedPayload(t *testing.T) {
	creds := aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", SessionToken: "FwoGZXIvYXdzEXAMPLE"}
	t.Setenv("AWS_ACCESS_KEY_ID", creds.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", creds.SecretAccessKey)
	t.Setenv("AWS_SESSION_TOKEN", creds.SessionToken)
	t.Setenv("AWS_REGION", "eu-west-1")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")

	b := &saslfake.Broker{Mechanism: "AWS_MSK_IAM", Reply: []byte(`{"version":"2020_10_22","request-id":"r-1"}`)}
	b.Check = func(auth []byte) error {
		_, err := saslfake.VerifyMSKIAM(auth, "127.0.0.1", "eu-west-1", creds, time.Now())
		return err
	}
	c := fakeBroker(t, b)
	provider, err := MSKCredentials(context.Background(), MSKCredentialsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if err := produce(t, c, MSKIAM{Credentials: provider}.Mechanism()); err != nil {
		t.Fatalf("produce: %v (refused: %v)", err, b.Refused())
	}
	if len(b.Auths()) == 0 {
		t.Fatal("no authentication reached the broker")
	}

	other := aws.Credentials{AccessKeyID: creds.AccessKeyID, SecretAccessKey: "another-secret", SessionToken: creds.SessionToken}
	err = produce(t, c, MSKIAM{Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) { return other, nil })}.Mechanism())
	if err == nil || len(b.Refused()) == 0 || !strings.Contains(b.Refused()[0].Error(), "x-amz-signature") {
		t.Errorf("a payload signed with another secret: %v (refused: %v)", err, b.Refused())
	}
}

// TestMSKCredentialsProfile: awsProfileName picks a profile of the shared
// credentials file; an unknown profile is an error naming it.
func TestMSKCredentialsProfile(t *testing.T) {
	dir := t.TempDir()
	credsFile := filepath.Join(dir, "credentials")
	if err := os.WriteFile(credsFile, []byte("[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = d\n\n[msk]\naws_access_key_id = AKIDMSK\naws_secret_access_key = m\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", credsFile)
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "none"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	ctx := context.Background()
	p, err := MSKCredentials(ctx, MSKCredentialsConfig{Profile: "msk"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.Retrieve(ctx)
	if err != nil || c.AccessKeyID != "AKIDMSK" {
		t.Errorf("profile msk gave %q, %v", c.AccessKeyID, err)
	}
	_, err = MSKCredentials(ctx, MSKCredentialsConfig{Profile: "nope"})
	if err == nil || !strings.Contains(fmt.Sprint(err), "nope") {
		t.Errorf("unknown profile: %v", err)
	}
}
