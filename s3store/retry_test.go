package s3store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	smithy "github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

func TestBackoffCeiling(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		base time.Duration
		n    int
		want time.Duration
	}{
		{200 * ms, 1, 200 * ms},
		{200 * ms, 2, 400 * ms},
		{200 * ms, 3, 800 * ms},
		{200 * ms, 10, 200 * ms * 512},
		{200 * ms, 20, 200 * ms * (1 << 19)}, // 29h > 24h
		{200 * ms, 19, 200 * ms * (1 << 18)}, // 14.6h
		{1, 47, 1 << 46},
		{1, 48, MaxRetryBackoff},
		{time.Hour, 5, 16 * time.Hour},
		{time.Hour, 6, MaxRetryBackoff},
		{0, 3, 0},
		{-ms, 3, 0},
		{ms, 0, 0},
		{ms, -5, 0},
		{math.MaxInt64, 1, MaxRetryBackoff},
		{25 * time.Hour, 1, MaxRetryBackoff},
	}
	for _, c := range cases {
		want := min(c.want, MaxRetryBackoff)
		if got := BackoffCeiling(c.base, c.n); got != want {
			t.Errorf("BackoffCeiling(%v, %d) = %v, want %v", c.base, c.n, got, want)
		}
	}
	// No overflow: the ceiling never decreases and stays in [0, 24h].
	for _, base := range []time.Duration{1, 200 * ms, time.Second, 7 * time.Hour, math.MaxInt64 / 3, math.MaxInt64} {
		prev := time.Duration(0)
		for n := 1; n <= 200; n++ {
			got := BackoffCeiling(base, n)
			if got < prev || got > MaxRetryBackoff || got <= 0 {
				t.Fatalf("BackoffCeiling(%v, %d) = %v after %v", base, n, got, prev)
			}
			prev = got
		}
		if got := BackoffCeiling(base, math.MaxInt); got != MaxRetryBackoff {
			t.Errorf("BackoffCeiling(%v, MaxInt) = %v", base, got)
		}
	}
}

func TestBackoffFullJitter(t *testing.T) {
	base := 200 * time.Millisecond
	for n := 1; n <= 5; n++ {
		ceil := BackoffCeiling(base, n)
		var gotArg int64
		lo := Backoff(base, n, func(k int64) int64 { gotArg = k; return 0 })
		hi := Backoff(base, n, func(k int64) int64 { return k - 1 })
		if lo != 0 || hi != ceil || gotArg != int64(ceil)+1 {
			t.Errorf("n=%d: Backoff range [%v, %v] (rnd arg %d), want [0, %v]", n, lo, hi, gotArg, ceil)
		}
		for range 100 {
			if d := Backoff(base, n, nil); d < 0 || d > ceil {
				t.Fatalf("n=%d: Backoff = %v outside [0, %v]", n, d, ceil)
			}
		}
	}
	if d := Backoff(0, 3, nil); d != 0 {
		t.Errorf("Backoff with zero base = %v", d)
	}
	if d := Backoff(math.MaxInt64, 1000, nil); d < 0 || d > MaxRetryBackoff {
		t.Errorf("Backoff(MaxInt64, 1000) = %v", d)
	}
}

func responseError(status int, code string) error {
	return &awshttp.ResponseError{ResponseError: &smithyhttp.ResponseError{
		Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}},
		Err:      &smithy.GenericAPIError{Code: code, Message: "m"},
	}}
}

func TestIsRetryable(t *testing.T) {
	cases := []struct {
		err  error
		want bool
	}{
		{responseError(500, "InternalError"), true},
		{responseError(501, "NotImplemented"), true},
		{responseError(503, "SlowDown"), true},
		{responseError(429, "TooManyRequests"), true},
		{responseError(400, "RequestTimeout"), true},
		{responseError(400, "Throttling"), true},
		{responseError(404, "NoSuchBucket"), false},
		{responseError(404, "NoSuchKey"), false},
		{responseError(403, "AccessDenied"), false},
		{responseError(400, "InvalidArgument"), false},
		{&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{fmt.Errorf("wrapped: %w", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}), true},
		{context.Canceled, false},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), false},
		{errors.New("some local error"), false},
		{nil, false},
	}
	for _, c := range cases {
		if got := isRetryable(c.err); got != c.want {
			t.Errorf("isRetryable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestRetrierDo(t *testing.T) {
	transient := responseError(500, "InternalError")
	var waits []time.Duration
	r := retrier{retries: 3, backoff: 100 * time.Millisecond, sleep: func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		return nil
	}}
	calls := 0
	n, err := r.do(t.Context(), func(context.Context) error {
		calls++
		if calls <= 2 {
			return transient
		}
		return nil
	})
	if err != nil || n != 3 || calls != 3 || len(waits) != 2 {
		t.Errorf("two failures then success: attempts %d, calls %d, waits %v, err %v", n, calls, waits, err)
	}
	for i, w := range waits {
		if w < 0 || w > BackoffCeiling(100*time.Millisecond, i+1) {
			t.Errorf("wait %d = %v beyond its ceiling", i+1, w)
		}
	}

	calls, waits = 0, nil
	n, err = r.do(t.Context(), func(context.Context) error { calls++; return transient })
	if !errors.Is(err, transient) || n != 4 || calls != 4 || len(waits) != 3 {
		t.Errorf("always failing: attempts %d, calls %d, waits %d, err %v", n, calls, len(waits), err)
	}

	calls = 0
	denied := responseError(403, "AccessDenied")
	n, err = r.do(t.Context(), func(context.Context) error { calls++; return denied })
	if !errors.Is(err, denied) || n != 1 || calls != 1 {
		t.Errorf("non-retryable: attempts %d, calls %d, err %v", n, calls, err)
	}

	// Cancellation during the wait ends the loop with the context's error.
	ctx, cancel := context.WithCancel(t.Context())
	r.sleep = sleepCtx
	r.backoff = time.Hour
	calls = 0
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	start := time.Now()
	_, err = r.do(ctx, func(context.Context) error { calls++; return transient })
	if !errors.Is(err, context.Canceled) || !errors.Is(err, transient) || time.Since(start) > 5*time.Second {
		t.Errorf("cancel during backoff: err %v after %v", err, time.Since(start))
	}
}
