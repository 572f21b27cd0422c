package kafkaauth

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/twmb/franz-go/pkg/sasl"
	saslaws "github.com/twmb/franz-go/pkg/sasl/aws"
)

// MSKIAM is AWS_MSK_IAM: each authentication signs a kafka-cluster:Connect
// request for the broker's host with SigV4, as aws-msk-iam-auth does. The
// region is the one in the broker's host name
// (b-1.name.id.c2.kafka.<region>.amazonaws.com), else AWS_REGION or
// AWS_DEFAULT_REGION.
type MSKIAM struct {
	Credentials aws.CredentialsProvider
	// UserAgent is sent in the payload; franz-go's when empty.
	UserAgent string
}

// Mechanism returns the mechanism. Credentials are retrieved at every
// authentication (the provider caches and refreshes them).
func (m MSKIAM) Mechanism() sasl.Mechanism {
	return saslaws.ManagedStreamingIAM(func(ctx context.Context) (saslaws.Auth, error) {
		c, err := m.Credentials.Retrieve(ctx)
		if err != nil {
			return saslaws.Auth{}, fmt.Errorf("AWS_MSK_IAM: AWS credentials: %w", err)
		}
		return saslaws.Auth{AccessKey: c.AccessKeyID, SecretKey: c.SecretAccessKey, SessionToken: c.SessionToken, UserAgent: m.UserAgent}, nil
	})
}

// MSKCredentialsConfig says where MSK IAM credentials come from, as the
// options of aws-msk-iam-auth's IAMLoginModule name them.
type MSKCredentialsConfig struct {
	Profile     string // awsProfileName: a profile of the shared config files
	RoleARN     string // awsRoleArn: assume this role with the chain's credentials
	SessionName string // awsRoleSessionName (default aws-msk-iam-auth)
	ExternalID  string // awsRoleExternalId
	STSRegion   string // awsStsRegion: the STS endpoint's region
}

// MSKCredentials returns the credentials provider of cfg: AWS's default
// chain (environment, shared files, web identity, container and instance
// roles), from cfg.Profile when set, and with cfg.RoleARN assumed on top.
// Nothing is fetched yet: the first authentication does.
func MSKCredentials(ctx context.Context, cfg MSKCredentialsConfig) (aws.CredentialsProvider, error) {
	var opts []func(*awsconfig.LoadOptions) error
	if cfg.Profile != "" {
		opts = append(opts, awsconfig.WithSharedConfigProfile(cfg.Profile))
	}
	if cfg.STSRegion != "" {
		opts = append(opts, awsconfig.WithRegion(cfg.STSRegion))
	}
	ac, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	if cfg.RoleARN == "" {
		return ac.Credentials, nil
	}
	session := cfg.SessionName
	if session == "" {
		session = "aws-msk-iam-auth"
	}
	p := stscreds.NewAssumeRoleProvider(sts.NewFromConfig(ac), cfg.RoleARN, func(o *stscreds.AssumeRoleOptions) {
		o.RoleSessionName = session
		if cfg.ExternalID != "" {
			o.ExternalID = aws.String(cfg.ExternalID)
		}
	})
	return aws.NewCredentialsCache(p), nil
}
