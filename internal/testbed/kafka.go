package testbed

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kafkaReadyTimeout bounds how long a started broker may take to answer a
// metadata request.
const kafkaReadyTimeout = 60 * time.Second

// kafkaLogTailLines is how much of the broker log a startup error carries.
const kafkaLogTailLines = 40

// errPortTaken says a child could not bind its port; the start is retried on
// other ports.
var errPortTaken = errors.New("testbed: port already in use")

// KafkaBroker is a running single-node Apache Kafka broker (KRaft, combined
// broker and controller) on loopback.
type KafkaBroker struct {
	// Addr is the PLAINTEXT bootstrap address, 127.0.0.1:port.
	Addr string
	// ControllerAddr is the KRaft controller listener, 127.0.0.1:port.
	ControllerAddr string
	// Dir is the broker's temp dir: server.properties, broker.log, data/.
	Dir string
	// LogPath is the broker log (stdout and stderr of the JVM).
	LogPath string
	// SASLSSLAddr is the SASL_SSL (SCRAM) listener, 127.0.0.1:port, when
	// Options.SASLSSL; CAPath is then the PEM certificate clients trust
	// (the broker's, self-signed) and Keytool the JDK's keytool.
	SASLSSLAddr, CAPath, Keytool string

	keystore string
	// oauthJWKS and oauthReauth are Options.OAuthJWKSURL and OAuthReauth.
	oauthJWKS   string
	oauthReauth time.Duration
	// krb5Conf and gssapiKeytab are the KDC's client config and the
	// broker's keytab, with Options.KDC.
	krb5Conf, gssapiKeytab string

	java string   // the JVM
	args []string // its arguments, for Restart

	mu     sync.Mutex
	proc   *child
	closed bool
}

// StartKafka formats a fresh log dir and starts a broker on free ports. It
// returns once the broker answers a metadata request, or an error carrying the
// tail of the broker log. Errors wrapping ErrToolMissing mean java 17 or mvn
// is not installed. Close stops the broker and removes its dir.
func StartKafka(ctx context.Context, opts Options) (*KafkaBroker, error) {
	java, err := findJava(ctx)
	if err != nil {
		return nil, err
	}
	libs, err := kafkaLibs(ctx, opts)
	if err != nil {
		return nil, err
	}
	removeStaleTempDirs(opts.TempDir)
	var lastErr error
	for range 3 {
		k, err := startKafkaOnce(ctx, opts, java, libs)
		if err == nil {
			return k, nil
		}
		lastErr = err
		if !errors.Is(err, errPortTaken) {
			break
		}
	}
	return nil, lastErr
}

// newClusterID returns a random Kafka cluster id: 16 random bytes in unpadded
// URL-safe base64, not starting with '-' (which the storage tool would take
// for a flag).
func newClusterID() string {
	for {
		var b [16]byte
		_, _ = rand.Read(b[:])
		id := base64.RawURLEncoding.EncodeToString(b[:])
		if !strings.HasPrefix(id, "-") {
			return id
		}
	}
}

func startKafkaOnce(ctx context.Context, opts Options, java, libs string) (_ *KafkaBroker, err error) {
	dir, err := makeTempDir(opts.TempDir, "kafka")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(dir)
		}
	}()
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	k := &KafkaBroker{
		Addr:           fmt.Sprintf("127.0.0.1:%d", ports[0]),
		ControllerAddr: fmt.Sprintf("127.0.0.1:%d", ports[1]),
		Dir:            dir,
		LogPath:        filepath.Join(dir, "broker.log"),
		oauthJWKS:      opts.OAuthJWKSURL,
		oauthReauth:    opts.OAuthReauth,
	}
	if opts.SASLSSL {
		if err := k.makeSASLSSL(ctx, fmt.Sprintf("127.0.0.1:%d", ports[2]), opts.KDC); err != nil {
			return nil, err
		}
	}
	props := filepath.Join(dir, "server.properties")
	if err := os.WriteFile(props, []byte(k.serverProperties(filepath.Join(dir, "data"))), 0o644); err != nil {
		return nil, fmt.Errorf("testbed: write %s: %w", props, err)
	}
	log4j := filepath.Join(dir, "log4j2.properties")
	if err := os.WriteFile(log4j, brokerLog4j, 0o644); err != nil {
		return nil, fmt.Errorf("testbed: write %s: %w", log4j, err)
	}
	classpath := filepath.Join(libs, "*")
	log := opts.logger()
	start := time.Now()

	// The storage tool runs for a second: C1 alone starts it fastest.
	if _, err := runTool(ctx, dir, nil, java, "-XX:TieredStopAtLevel=1", "-Xmx256m",
		"-Dlog4j2.configurationFile=file:"+log4j, "-cp", classpath, "kafka.tools.StorageTool",
		"format", "-t", newClusterID(), "-c", props); err != nil {
		return nil, fmt.Errorf("testbed: format Kafka storage: %w", err)
	}

	heap := opts.KafkaHeap
	if heap == "" {
		heap = "768m"
	}
	args := []string{"-Xms128m", "-Xmx" + heap, "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20"}
	if opts.QuickJVM {
		args = append(args, "-XX:TieredStopAtLevel=1")
	}
	args = append(args, k.saslJVMProps()...)
	args = append(args, "-Djava.awt.headless=true", "-Dlog4j2.configurationFile=file:"+log4j,
		"-cp", classpath, "kafka.Kafka", props)
	k.java, k.args = java, args
	if err := k.startJVM(ctx); err != nil {
		return nil, err
	}
	log.Info("testbed: kafka ready", "version", KafkaVersion, "addr", k.Addr,
		"took", time.Since(start).Round(time.Millisecond).String(), "log", k.LogPath)
	return k, nil
}

// startJVM starts the broker process and waits until it answers.
func (k *KafkaBroker) startJVM(ctx context.Context) error {
	cmd := exec.Command(k.java, k.args...)
	cmd.Dir = k.Dir
	proc, err := startChild("kafka", cmd, k.LogPath)
	if err != nil {
		return err
	}
	k.proc = proc
	if err := k.waitReady(ctx); err != nil {
		proc.stop(0)
		tail := logTail(k.LogPath, kafkaLogTailLines)
		if strings.Contains(tail, "Address already in use") {
			err = fmt.Errorf("%w: %w", errPortTaken, err)
		}
		return fmt.Errorf("testbed: Kafka %s at %s did not start: %w\n--- last %d lines of %s ---\n%s",
			KafkaVersion, k.Addr, err, kafkaLogTailLines, k.LogPath, tail)
	}
	return nil
}

// Kill ends the broker at once (SIGKILL), as a crash or a lost machine
// would; its ports and log dir stay, for Restart.
func (k *KafkaBroker) Kill() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.proc != nil {
		k.proc.kill()
	}
}

// Restart starts a killed broker again on the same ports and log dir (its
// topics, records and committed offsets survive) and returns once it
// answers a metadata request.
func (k *KafkaBroker) Restart(ctx context.Context) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return ErrStopped
	}
	if k.proc != nil && !k.proc.exited() {
		return errors.New("testbed: Restart of a broker that is running")
	}
	return k.startJVM(ctx)
}

// serverProperties is the broker's config: one combined broker and controller
// with a static quorum, settings sized for tests.
func (k *KafkaBroker) serverProperties(dataDir string) string {
	lines := []string{
		"process.roles=broker,controller",
		"node.id=1",
		"controller.quorum.voters=1@" + k.ControllerAddr,
		"controller.listener.names=CONTROLLER",
		"inter.broker.listener.name=PLAINTEXT",
		"log.dirs=" + dataDir,
		"num.partitions=1",
		"default.replication.factor=1",
		"auto.create.topics.enable=false",
		"offsets.topic.replication.factor=1",
		"offsets.topic.num.partitions=3",
		"transaction.state.log.replication.factor=1",
		"transaction.state.log.min.isr=1",
		"transaction.state.log.num.partitions=3",
		"share.coordinator.state.topic.replication.factor=1",
		"share.coordinator.state.topic.min.isr=1",
		"min.insync.replicas=1",
		"group.initial.rebalance.delay.ms=0",
		"num.network.threads=2",
		"num.io.threads=4",
		"delete.topic.enable=true",
		// The log cleaner looks for work every 200 ms (default 15 s), so
		// tests of compacted topics see compaction within seconds.
		"log.cleaner.backoff.ms=200",
		// Tests of time-based layouts produce records at fixed instants
		// (the 2026/2027 year boundary, the 2027 DST changes), which Kafka
		// 4 refuses by default when they lie more than an hour ahead of
		// the broker's clock; ten years ahead are accepted here.
		"log.message.timestamp.after.max.ms=315360000000",
	}
	return strings.Join(append(lines, k.listenerProperties()...), "\n") + "\n"
}

// waitReady polls the broker with metadata requests until one succeeds.
func (k *KafkaBroker) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, kafkaReadyTimeout)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.Addr), kgo.DialTimeout(time.Second))
	if err != nil {
		return fmt.Errorf("testbed: kafka client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var lastErr error
	for {
		if k.proc.exited() {
			return fmt.Errorf("broker process exited: %v", k.proc.waitErr)
		}
		attempt, cancelAttempt := context.WithTimeout(ctx, 2*time.Second)
		md, err := adm.BrokerMetadata(attempt)
		cancelAttempt()
		if err == nil && len(md.Brokers) > 0 {
			return nil
		}
		if err != nil {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready after %v (last error: %v): %w", kafkaReadyTimeout, lastErr, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Close stops the broker (SIGTERM, then SIGKILL after a grace period) and
// removes its temp dir. It is safe to call more than once.
func (k *KafkaBroker) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil
	}
	k.closed = true
	if k.proc != nil {
		k.proc.stop(stopGrace)
	}
	if err := os.RemoveAll(k.Dir); err != nil {
		return fmt.Errorf("testbed: remove Kafka dir %s: %w", k.Dir, err)
	}
	return nil
}

// NewClient returns a franz-go client seeded with the broker's address; the
// caller closes it. Later opts override earlier ones.
func (k *KafkaBroker) NewClient(opts ...kgo.Opt) (*kgo.Client, error) {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(k.Addr)}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("testbed: kafka client for %s: %w", k.Addr, err)
	}
	return cl, nil
}

// Client returns a franz-go client seeded with the broker's address, closed
// when the test ends.
func (k *KafkaBroker) Client(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := k.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// CreateTopicContext creates topic name with the given partitions and
// replication factor 1, and waits until every partition has a leader.
func (k *KafkaBroker) CreateTopicContext(ctx context.Context, name string, partitions int32) error {
	cl, err := k.NewClient()
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	resp, err := adm.CreateTopic(ctx, partitions, 1, nil, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("testbed: create topic %q with %d partitions: %w", name, partitions, err)
	}
	for {
		td, err := adm.ListTopics(ctx, name)
		if err == nil {
			d, ok := td[name]
			if ok && d.Err == nil && int32(len(d.Partitions)) == partitions && allLed(d.Partitions) {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testbed: topic %q created but its partitions have no leader: %w", name, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func allLed(ps kadm.PartitionDetails) bool {
	for _, p := range ps {
		if p.Leader < 0 || p.Err != nil {
			return false
		}
	}
	return true
}

// CreateTopic creates topic name with the given partitions and replication
// factor 1, failing the test on error.
func (k *KafkaBroker) CreateTopic(t testing.TB, name string, partitions int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := k.CreateTopicContext(ctx, name, partitions); err != nil {
		t.Fatal(err)
	}
}
