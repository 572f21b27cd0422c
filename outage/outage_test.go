package outage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestTransient(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{dial, true},
		{fmt.Errorf("fetch: %w", &kgo.ErrGroupSession{Err: dial}), true},
		{&kgo.ErrGroupSession{Err: kerr.CoordinatorNotAvailable}, true},
		{kerr.NotCoordinator, true},
		{kerr.RequestTimedOut, true},
		{kerr.NotController, true},
		{syscall.ECONNRESET, true},
		{io.EOF, true},
		{context.DeadlineExceeded, true},
		{nil, false},
		{context.Canceled, false},
		{kerr.SaslAuthenticationFailed, false},
		{&kgo.ErrGroupSession{Err: kerr.GroupAuthorizationFailed}, false},
		{kerr.TopicAuthorizationFailed, false},
		{kerr.InvalidConfig, false},
		{errors.New("bad config"), false},
	} {
		if got := Transient(c.err); got != c.want {
			t.Errorf("Transient(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestBackoffCappedWithJitter(t *testing.T) {
	b := Backoff{Min: 100 * time.Millisecond, Max: time.Second}
	ceil := []time.Duration{100, 200, 400, 800, 1000, 1000, 1000}
	for i, c := range ceil {
		c *= time.Millisecond
		d := b.Next()
		if d < c/2 || d > c {
			t.Fatalf("wait %d: %v, want in [%v, %v]", i+1, d, c/2, c)
		}
	}
	b.Reset()
	if d := b.Next(); d > 100*time.Millisecond {
		t.Fatalf("after Reset: %v", d)
	}
	seen := map[time.Duration]bool{}
	for range 20 {
		b.Reset()
		seen[b.Next()] = true
	}
	if len(seen) < 2 {
		t.Fatal("no jitter")
	}
}

type recorder struct{ calls []string }

func (r *recorder) SetUp(dep Dep) { r.calls = append(r.calls, "up "+string(dep)) }
func (r *recorder) SetDown(dep Dep, err error) {
	r.calls = append(r.calls, "down "+string(dep)+": "+err.Error())
}

func TestTrackerOverdueAndLeft(t *testing.T) {
	rec := &recorder{}
	tr := NewTracker(rec, time.Minute)
	now := time.Unix(1000, 0)
	tr.now = func() time.Time { return now }
	if tr.Overdue() != nil || tr.Left(time.Hour) != time.Hour {
		t.Fatal("nothing down")
	}
	tr.Down(Registry, errors.New("refused"))
	now = now.Add(20 * time.Second)
	tr.Down(Broker, errors.New("dial"))
	tr.Down(Registry, errors.New("refused again")) // still down since the first
	if left := tr.Left(time.Hour); left != 40*time.Second {
		t.Fatalf("left %v", left)
	}
	now = now.Add(40 * time.Second)
	var ue *UnreachableError
	if err := tr.Overdue(); !errors.As(err, &ue) || ue.Dep != Registry || ue.For != time.Minute ||
		!strings.Contains(err.Error(), "Schema Registry") || !strings.Contains(err.Error(), "refused again") {
		t.Fatalf("overdue: %v", err)
	}
	tr.Up(Registry)
	if tr.Overdue() != nil {
		t.Fatal("the broker was down for 40 s only")
	}
	tr.Recovered(Store) // never down: nothing passed on
	tr.Recovered(Broker)
	tr.Up(Broker) // up already: nothing passed on
	want := []string{"down registry: refused", "down broker: dial", "down registry: refused again", "up registry", "up broker"}
	if fmt.Sprint(rec.calls) != fmt.Sprint(want) {
		t.Fatalf("calls %q, want %q", rec.calls, want)
	}
	tr.Expect(Broker, errors.New("not yet")) // has been up: nothing
	tr.Expect(Store, errors.New("no answer yet"))
	now = now.Add(59 * time.Second)
	if tr.Overdue() != nil {
		t.Fatal("expected for 59 s only")
	}
	now = now.Add(time.Second)
	if err := tr.Overdue(); !errors.As(err, &ue) || ue.Dep != Store || !strings.Contains(err.Error(), "no answer yet") {
		t.Fatalf("overdue: %v", err)
	}
	if len(rec.calls) != len(want) {
		t.Fatalf("Expect reported %q", rec.calls[len(want):])
	}
	if NewTracker(nil, 0).Overdue() != nil {
		t.Fatal("no limit")
	}
}
