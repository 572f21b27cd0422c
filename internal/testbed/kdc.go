package testbed

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// KDCRealm is the Kerberos realm of the test bed's KDC.
const KDCRealm = "KAFKAS3.TEST"

// KDC is a running MIT Kerberos KDC (Debian's krb5-kdc) on loopback, with
// its database in a temp dir.
type KDC struct {
	// Addr is the KDC's TCP and UDP address, 127.0.0.1:port.
	Addr string
	// Krb5Conf is a krb5.conf naming the realm KDCRealm at Addr (TCP),
	// for clients: KRB5_CONFIG, java.security.krb5.conf, kafkas3.krb5.conf.
	Krb5Conf string
	// Dir holds the configuration, database, keytabs and kdc.log.
	Dir string

	env  []string
	tool string // kadmin.local
	proc *child
}

// StartKDC creates a realm (kdb5_util) and starts krb5kdc in the
// foreground; Close stops it. Errors wrapping ErrToolMissing mean
// krb5-kdc or krb5-admin-server is not installed.
func StartKDC(ctx context.Context, opts Options) (*KDC, error) {
	var bins []string
	for _, name := range []string{"kdb5_util", "kadmin.local", "krb5kdc"} {
		p, err := exec.LookPath(name)
		if err != nil {
			return nil, missingTool("testbed: %s not found on PATH (Debian's krb5-kdc and krb5-admin-server; needed for the GSSAPI tests)", name)
		}
		bins = append(bins, p)
	}
	dir, err := makeTempDir(opts.TempDir, "kdc")
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	k := &KDC{Addr: fmt.Sprintf("127.0.0.1:%d", ports[0]), Dir: dir, Krb5Conf: filepath.Join(dir, "krb5.conf"), tool: bins[1]}
	if err := k.writeConfig(ports[0]); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if _, err := runTool(ctx, dir, k.env, bins[0], "create", "-s", "-r", KDCRealm, "-P", "testbed-master"); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("testbed: create the Kerberos realm: %w", err)
	}
	cmd := exec.Command(bins[2], "-n", "-r", KDCRealm)
	cmd.Dir, cmd.Env = dir, k.env
	if k.proc, err = startChild("krb5kdc", cmd, filepath.Join(dir, "krb5kdc.out")); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := k.waitReady(ctx); err != nil {
		_ = k.Close()
		return nil, err
	}
	opts.logger().Info("testbed: kdc ready", "realm", KDCRealm, "addr", k.Addr)
	return k, nil
}

// writeConfig writes kdc.conf and krb5.conf and sets the environment the
// MIT tools read them from.
func (k *KDC) writeConfig(port int) error {
	kdcConf := fmt.Sprintf(`[kdcdefaults]
 kdc_ports = %[1]d
 kdc_tcp_ports = %[1]d
[realms]
 %[2]s = {
  database_name = %[3]s/principal
  key_stash_file = %[3]s/stash
  acl_file = %[3]s/kadm5.acl
  kdc_ports = %[1]d
  kdc_tcp_ports = %[1]d
  supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
  max_life = 1h
 }
[logging]
 kdc = FILE:%[3]s/kdc.log
`, port, KDCRealm, k.Dir)
	krb5 := fmt.Sprintf(`[libdefaults]
 default_realm = %[1]s
 udp_preference_limit = 1
 dns_lookup_kdc = false
 dns_lookup_realm = false
 rdns = false
[realms]
 %[1]s = {
  kdc = %[2]s
 }
`, KDCRealm, k.Addr)
	kdcPath := filepath.Join(k.Dir, "kdc.conf")
	for path, text := range map[string]string{kdcPath: kdcConf, k.Krb5Conf: krb5} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return fmt.Errorf("testbed: write %s: %w", path, err)
		}
	}
	k.env = append(os.Environ(), "KRB5_CONFIG="+k.Krb5Conf, "KRB5_KDC_PROFILE="+kdcPath)
	return nil
}

// waitReady waits until the KDC accepts TCP connections.
func (k *KDC) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if k.proc.exited() {
			break
		}
		if c, err := net.DialTimeout("tcp", k.Addr, time.Second); err == nil {
			_ = c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("testbed: krb5kdc at %s did not start:\n%s", k.Addr, logTail(filepath.Join(k.Dir, "krb5kdc.out"), 20))
}

// AddPrincipal creates principal (name or name/instance, in KDCRealm)
// with a random key and returns a keytab holding it.
func (k *KDC) AddPrincipal(ctx context.Context, principal string) (string, error) {
	kt := filepath.Join(k.Dir, strings.ReplaceAll(principal, "/", "_")+".keytab")
	for _, q := range []string{"addprinc -randkey " + principal, "ktadd -k " + kt + " " + principal} {
		if _, err := runTool(ctx, k.Dir, k.env, k.tool, "-r", KDCRealm, "-q", q); err != nil {
			return "", fmt.Errorf("testbed: kadmin.local %s: %w", q, err)
		}
	}
	return kt, nil
}

// MustAddPrincipal is AddPrincipal failing the test on error.
func (k *KDC) MustAddPrincipal(t testing.TB, principal string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kt, err := k.AddPrincipal(ctx, principal)
	if err != nil {
		t.Fatal(err)
	}
	return kt
}

// Close stops the KDC and removes its dir.
func (k *KDC) Close() error {
	if k.proc != nil {
		k.proc.stop(stopGrace)
	}
	if err := os.RemoveAll(k.Dir); err != nil {
		return fmt.Errorf("testbed: remove KDC dir %s: %w", k.Dir, err)
	}
	return nil
}

// NewKDC starts a KDC for one test and stops it when the test ends. It
// skips the test when krb5-kdc is not installed (unless RequireEnv is 1).
func NewKDC(t testing.TB) *KDC {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	k, err := StartKDC(ctx, Options{})
	if err != nil {
		skipOrFail(t, err)
	}
	t.Cleanup(func() { _ = k.Close() })
	return k
}
