package kafkaauth

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/internal/saslfake"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
)

// fakeBroker starts a kfake cluster whose SASL side b plays.
func fakeBroker(t *testing.T, b *saslfake.Broker) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	b.Hook(c)
	return c
}

// produce sends one record through a client with mechanism m; the
// client retries nothing, so a refused authentication is the error.
func produce(t *testing.T, c *kfake.Cluster, m sasl.Mechanism) error {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.SASL(m), kgo.RequestRetries(0),
		kgo.RecordRetries(0), kgo.RetryTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr()
}

func writeToken(t *testing.T, path, tok string) {
	t.Helper()
	if err := os.WriteFile(path+".tmp", []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil { // as a rotating agent does
		t.Fatal(err)
	}
}

func newIssuer(t *testing.T) *saslfake.Issuer {
	t.Helper()
	iss, err := saslfake.NewIssuer()
	if err != nil {
		t.Fatal(err)
	}
	return iss
}

func mustToken(t *testing.T, iss *saslfake.Issuer, sub string, iat, exp time.Time) string {
	t.Helper()
	tok, err := iss.Token(sub, iat, exp)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func tempPath(t *testing.T, name string) string { return filepath.Join(t.TempDir(), name) }

func b64enc(s string) string { return base64.URLEncoding.EncodeToString([]byte(s)) }
