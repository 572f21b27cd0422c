//go:build integration

package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/kafkas3/kafkas3/internal/testbed"
)

// benchCommand is what `make bench` runs.
const benchCommand = "go test -count=1 -tags integration -timeout 60m -run '^$' -bench . -benchtime 1x ./internal/bench/..."

// fact is one line of the machine and setup description.
type fact struct{ name, value string }

type facts []fact

func (f *facts) add(name, value string) { *f = append(*f, fact{name, value}) }

// collect records the machine and the services.
func (f *facts) collect(e *env) {
	f.add("date", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	f.add("cpu", fmt.Sprintf("%d cores (nproc), %s", runtime.NumCPU(), procField("/proc/cpuinfo", "model name")))
	mem := procField("/proc/meminfo", "MemTotal")
	if kb, err := strconv.ParseInt(strings.TrimSuffix(mem, " kB"), 10, 64); err == nil {
		mem = human(kb << 10)
	}
	f.add("memory", mem)
	f.add("kernel", strings.TrimSpace(readFile("/proc/sys/kernel/osrelease")))
	f.add("go", runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH)
	f.add("kafka", fmt.Sprintf("Apache Kafka %s, single KRaft node on loopback, -Xmx1g, G1, full JIT (not the tests' C1-only mode); %s",
		testbed.KafkaVersion, javaVersion()))
	f.add("s3", "versitygw "+testbed.VersitygwVersion+", posix backend on the same disk, loopback")
	f.add("load average at start", strings.Join(strings.Fields(readFile("/proc/loadavg"))[:3], " "))
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// procField returns the value of the first "name: value" line of a /proc file.
func procField(path, name string) string {
	sc := bufio.NewScanner(strings.NewReader(readFile(path)))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == name {
			return strings.Join(strings.Fields(v), " ")
		}
	}
	return "unknown"
}

func javaVersion() string {
	out, err := exec.Command("java", "-version").CombinedOutput()
	if err != nil {
		return "java unknown"
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(line)
}

// human renders a byte count in binary units.
func human(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// markdown renders the results: table, then setup facts.
func (e *env) markdown() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Command: `make bench`, which runs `%s`.\n", benchCommand)
	fmt.Fprintf(&b, "Benchmark wall time (services start, binary build, loading and every run): %s.\n\n",
		time.Since(e.start).Round(time.Second))
	b.WriteString("| run | records | MB | seconds | MB/s | records/s | peak RSS | ratio | CPU s: process / broker / versitygw | CPU s/GB | vs limit: MB/s × / CPU s/GB × | notes |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | --- | --- |\n")
	for _, r := range e.rows {
		ratio := ""
		if r.against != "" {
			ratio = fmt.Sprintf("**%.2f** × %s", r.ratio, r.against)
		}
		limit := ""
		if r.limit != nil {
			limit = fmt.Sprintf("**%.2f** / **%.2f** × %s", r.rate()/r.limit.rate, r.cpuPerGB()/r.limit.cpuPerGB, r.limit.name)
		}
		fmt.Fprintf(&b, "| %s | %d | %.0f | %.1f | %.1f | %.0f | %.0f MiB | %s | %.1f / %.1f / %.1f | %.2f | %s | %s |\n",
			r.name, r.records, float64(r.bytes)/1e6, r.wall.Seconds(), r.rate()/1e6,
			float64(r.records)/r.wall.Seconds(), float64(r.rssKiB)/1024, ratio,
			r.cpu.self.Seconds(), r.cpu.broker.Seconds(), r.cpu.s3.Seconds(), r.cpuPerGB(), limit, r.note)
	}
	b.WriteString("\nMB = 10^6 bytes of Kafka record values; seconds are the wall time of the whole process " +
		"(start, connect, group join, work, final commit, exit); peak RSS is the process's maximum resident set " +
		"(getrusage ru_maxrss, or the VmHWM polled from /proc when ru_maxrss is no more than the benchmark process's own peak, rss_integration_test.go); CPU s is the user+system CPU time of the process itself and, during its run, " +
		"of the broker and of versitygw (the machine has " + fmt.Sprint(runtime.NumCPU()) + " cores for all three); " +
		"CPU s/GB is the process's own CPU seconds per 10^9 value bytes; vs limit is the row's MB/s and CPU s/GB " +
		"divided by the mean of the limit baseline runs named (a bare franz-go consume + aws-sdk-go-v2 upload, or + file write, " +
		"of the same bytes in objects of the same size, in one process).\n\n")
	e.facts.add("load average at end", strings.Join(strings.Fields(readFile("/proc/loadavg"))[:3], " "))
	for _, f := range e.facts {
		fmt.Fprintf(&b, "- %s: %s\n", f.name, f.value)
	}
	return b.Bytes()
}

// report prints the results and writes them to $KAFKAS3_BENCH_OUT.
func (e *env) report() {
	md := e.markdown()
	fmt.Printf("\n%s\n", md)
	if path := os.Getenv(outEnv); path != "" {
		if err := os.WriteFile(path, md, 0o644); err != nil {
			e.b.Errorf("write %s: %v", path, err)
		} else {
			fmt.Printf("results written to %s\n", path)
		}
	}
}
