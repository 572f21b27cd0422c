package restore

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Totals are a pass's planned totals. Record counts are not known before
// the objects are read (JSON and bytes objects do not say), so progress is
// measured in archive bytes.
type Totals struct {
	Objects int
	Bytes   int64
	// Limit describes the run's rate limit ("10.0 MB/s, 5000
	// records/s"), "" without one.
	Limit string
}

// Progress receives a run's progress. Advance is called from several
// goroutines at once.
type Progress interface {
	// Planned starts a pass (follow mode runs several) with its totals.
	// The counts given to Advance afterwards belong to this pass.
	Planned(t Totals)
	// Advance adds records acknowledged by Kafka and archive bytes read
	// (or skipped because the target already holds their records).
	Advance(records, bytes int64)
	// Finish is called once at the end of Run.
	Finish(s Summary)
}

type nopProgress struct{}

func (nopProgress) Planned(Totals)       {}
func (nopProgress) Advance(int64, int64) {}
func (nopProgress) Finish(Summary)       {}

// Renderer is a Progress that draws a live bar (records/s, bytes, ETA) on a
// terminal, or writes a plain line every Interval otherwise.
type Renderer struct {
	w        io.Writer
	tty      bool
	interval time.Duration
	now      func() time.Time

	mu       sync.Mutex
	bar      *progressbar.ProgressBar
	total    int64
	limit    string // ", limited to ..." with a rate limit
	bytes    int64
	records  int64
	started  time.Time
	lastLine time.Time
	printed  [2]int64 // records and bytes of the last plain line
}

var _ Progress = (*Renderer)(nil)

// NewRenderer returns a Renderer writing to w. isTerminal selects the live
// bar; otherwise a log line is written at most every interval (zero means
// ten seconds) and once at the end.
func NewRenderer(w io.Writer, isTerminal bool, interval time.Duration) *Renderer {
	if interval <= 0 {
		interval = 10 * time.Second
	}
	return &Renderer{w: w, tty: isTerminal, interval: interval, now: time.Now}
}

// Planned starts a pass.
func (p *Renderer) Planned(t Totals) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Finish()
		fmt.Fprintln(p.w)
	}
	p.total, p.bytes, p.records, p.limit = t.Bytes, 0, 0, ""
	if t.Limit != "" {
		p.limit = ", limited to " + t.Limit
	}
	p.started = p.now()
	p.lastLine = p.started
	if p.tty {
		p.bar = progressbar.NewOptions64(max(t.Bytes, 1),
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionShowBytes(true),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionSetDescription("restoring"),
			progressbar.OptionShowDescriptionAtLineEnd(),
		)
	}
}

// Advance adds records and bytes.
func (p *Renderer) Advance(records, bytes int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.records += records
	p.bytes += bytes
	now := p.now()
	if p.tty && p.bar != nil {
		p.bar.Describe(fmt.Sprintf("%d records, %.0f records/s%s", p.records, p.rate(now), p.limit))
		_ = p.bar.Add64(bytes)
		return
	}
	if now.Sub(p.lastLine) >= p.interval {
		p.lastLine = now
		p.line(now)
	}
}

// Finish completes the bar or writes a last line.
func (p *Renderer) Finish(Summary) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Finish()
		fmt.Fprintln(p.w)
		p.bar = nil
		return
	}
	if !p.tty && !p.started.IsZero() && p.printed != [2]int64{p.records, p.bytes} {
		p.line(p.now())
	}
}

func (p *Renderer) rate(now time.Time) float64 {
	secs := now.Sub(p.started).Seconds()
	if secs <= 0 {
		return 0
	}
	return float64(p.records) / secs
}

// line writes one plain progress line; p.mu is held.
func (p *Renderer) line(now time.Time) {
	pct := 100.0
	if p.total > 0 {
		pct = 100 * float64(p.bytes) / float64(p.total)
	}
	eta := "-"
	if elapsed := now.Sub(p.started); p.bytes > 0 && p.bytes < p.total && elapsed > 0 {
		left := time.Duration(float64(elapsed) * float64(p.total-p.bytes) / float64(p.bytes))
		eta = left.Round(time.Second).String()
	}
	p.printed = [2]int64{p.records, p.bytes}
	fmt.Fprintf(p.w, "restore progress: %d records (%.0f/s%s), %s of %s (%.1f%%), ETA %s\n",
		p.records, p.rate(now), p.limit, formatBytes(p.bytes), formatBytes(p.total), pct, eta)
}
