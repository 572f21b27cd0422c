package restore

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// fakeClock is a settable clock for the Renderer.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestRendererPlainLines(t *testing.T) {
	var out bytes.Buffer
	clock := &fakeClock{t: time.Unix(1000, 0)}
	r := NewRenderer(&out, false, 10*time.Second)
	r.now = clock.now
	r.Planned(Totals{Objects: 4, Bytes: 4000})

	clock.t = clock.t.Add(5 * time.Second)
	r.Advance(500, 1000)
	if out.Len() != 0 {
		t.Fatalf("line before the interval: %q", out.String())
	}
	clock.t = clock.t.Add(5 * time.Second)
	r.Advance(500, 1000) // 10 s: 1000 records, 2000 of 4000 bytes
	want := "restore progress: 1000 records (100/s), 2.0 KiB of 3.9 KiB (50.0%), ETA 10s\n"
	if out.String() != want {
		t.Fatalf("line = %q, want %q", out.String(), want)
	}
	clock.t = clock.t.Add(time.Second)
	r.Advance(10, 10)
	if strings.Count(out.String(), "\n") != 1 {
		t.Fatalf("second line within the interval: %q", out.String())
	}
	clock.t = clock.t.Add(9 * time.Second)
	r.Advance(990, 1990)
	r.Finish(Summary{}) // nothing new since the last line: no repeat
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], "2000 records") || !strings.Contains(lines[1], "(100.0%), ETA -") {
		t.Fatalf("lines = %q", lines)
	}
}

func TestRendererTerminalBar(t *testing.T) {
	var out bytes.Buffer
	r := NewRenderer(&out, true, 0)
	r.Planned(Totals{Objects: 1, Bytes: 1 << 20})
	r.Advance(1234, 1<<19)
	time.Sleep(150 * time.Millisecond) // past the bar's render throttle
	r.Advance(1, 1<<19)
	r.Finish(Summary{})
	s := out.String()
	for _, want := range []string{"records/s", "1235 records", "MB", "100%"} {
		if !strings.Contains(s, want) {
			t.Errorf("bar output lacks %q: %q", want, s)
		}
	}
}

func TestSummaryString(t *testing.T) {
	s := Summary{Topics: 2, Partitions: 5, Objects: 7, Records: 1000, Bytes: 2048, Duration: 1500 * time.Millisecond,
		KeysSkipped: map[string]int{SkipOtherExtension: 2, SkipMalformed: 1}, AlreadyPresent: 10,
		Duplicates: 4, ObjectsSkipped: 1, Gaps: []PartitionGap{{Topic: "t", Gap: Gap{First: 5, Last: 9}}}, GapOffsets: 5}
	want := "restored 1000 records (2.0 KiB) from 7 objects of 2 topics, 5 partitions in 1.5s; already present: 10 records; keys skipped: 1 malformed name, 2 other extension; duplicates: 4; damaged objects skipped: 1; gaps: 1 (5 offsets)"
	if s.String() != want {
		t.Fatalf("String() = %q\nwant       %q", s.String(), want)
	}
}

// TestRendererShowsTheRateLimit: with a rate limit (--max-bytes-per-sec,
// --max-records-per-sec) the progress line says it.
func TestRendererShowsTheRateLimit(t *testing.T) {
	var out bytes.Buffer
	clock := &fakeClock{t: time.Unix(1000, 0)}
	r := NewRenderer(&out, false, time.Second)
	r.now = clock.now
	r.Planned(Totals{Objects: 1, Bytes: 100, Limit: "10.0 MB/s"})
	clock.t = clock.t.Add(2 * time.Second)
	r.Advance(200, 50)
	want := "restore progress: 200 records (100/s, limited to 10.0 MB/s), 50 B of 100 B (50.0%), ETA 2s\n"
	if out.String() != want {
		t.Fatalf("line = %q, want %q", out.String(), want)
	}
}
