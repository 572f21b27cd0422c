//go:build integration

package e2e

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/internal/saslfake"
	"github.com/kafkas3/kafkas3/internal/testbed"
)

// authBed is the one broker the authentication tests share (a broker
// start is the slow part of each): a SASL_SSL listener with SCRAM,
// OAUTHBEARER validated against the JWKS of iss (served on loopback by
// idp) and, when krb5-kdc is installed, GSSAPI with kdc.
type authBed struct {
	once   sync.Once
	err    error
	broker *testbed.KafkaBroker
	iss    *saslfake.Issuer
	idp    *httptest.Server
	kdc    *testbed.KDC
	kdcErr error
}

// sharedAuth is the package's authBed, closed when the tests end (run).
var sharedAuth authBed

// authBroker starts the shared auth broker on first use; the test fails
// when it does not start.
func authBroker(t *testing.T) *authBed {
	t.Helper()
	a := &sharedAuth
	a.once.Do(func() { a.err = a.start() })
	if a.err != nil {
		t.Fatal(a.err)
	}
	return a
}

func (a *authBed) start() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var err error
	if a.iss, err = saslfake.NewIssuer(); err != nil {
		return err
	}
	a.iss.ClientID, a.iss.ClientSecret, a.iss.Scope = "kafkas3-sink", "Cl1ent-Secret", "kafka"
	a.idp = httptest.NewServer(a.iss)
	opts := testbed.Options{QuickJVM: true, KafkaHeap: "384m", SASLSSL: true, OAuthJWKSURL: a.idp.URL + "/jwks"}
	a.kdc, a.kdcErr = testbed.StartKDC(ctx, testbed.Options{})
	if a.kdcErr == nil {
		opts.KDC = a.kdc
	}
	a.broker, err = testbed.StartKafka(ctx, opts)
	return err
}

// needKDC returns the shared KDC, skipping the test when krb5-kdc is
// missing (failing it with testbed.RequireEnv=1, as CI sets).
func (a *authBed) needKDC(t *testing.T) *testbed.KDC {
	t.Helper()
	if a.kdcErr != nil {
		if errors.Is(a.kdcErr, testbed.ErrToolMissing) && os.Getenv(testbed.RequireEnv) != "1" {
			t.Skip(a.kdcErr.Error())
		}
		t.Fatal(a.kdcErr)
	}
	return a.kdc
}

// close stops what start started.
func (a *authBed) close() {
	if a.broker != nil {
		_ = a.broker.Close()
	}
	if a.kdc != nil {
		_ = a.kdc.Close()
	}
	if a.idp != nil {
		a.idp.Close()
	}
}
