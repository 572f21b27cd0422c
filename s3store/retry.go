package s3store

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
)

// MaxRetryBackoff caps one wait between retries, as Confluent's sink does.
const MaxRetryBackoff = 24 * time.Hour

// BackoffCeiling is the longest wait before retry n (n >= 1) with base
// backoff base: base·2^(n-1), capped at MaxRetryBackoff. It never
// overflows, whatever n and base are. A non-positive base or n gives 0.
func BackoffCeiling(base time.Duration, n int) time.Duration {
	if base <= 0 || n <= 0 {
		return 0
	}
	if base >= MaxRetryBackoff {
		return MaxRetryBackoff
	}
	shift := n - 1
	// 24h < 2^47 ns, so with base >= 1ns a shift of 47 or more passes the
	// cap; below that, compare before shifting so nothing overflows.
	if shift >= 47 || base > MaxRetryBackoff>>uint(shift) {
		return MaxRetryBackoff
	}
	return base << uint(shift)
}

// Backoff is the wait before retry n with full jitter: a random duration in
// [0, BackoffCeiling(base, n)]. rnd(k) must return a value in [0, k); nil
// means math/rand/v2.
func Backoff(base time.Duration, n int, rnd func(int64) int64) time.Duration {
	ceil := BackoffCeiling(base, n)
	if ceil <= 0 {
		return 0
	}
	if rnd == nil {
		rnd = rand.Int64N
	}
	return time.Duration(rnd(int64(ceil) + 1))
}

// isRetryable reports whether a failed request may succeed when repeated:
// network errors, 5xx, 429, throttling, BadDigest (a body that did not
// match its checksum, corrupted on the way: each attempt reads the spool
// afresh) and ConditionalRequestConflict (409: a conditional write that
// met another write of the key; the retry finds it done, 412). Client errors such as NoSuchBucket or AccessDenied are not
// retried, and neither is a store certificate the client does not trust
// (certificateError), which the SDK counts as a connection error.
func isRetryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || certificateError(err) {
		return false
	}
	var ae smithy.APIError
	if errors.As(err, &ae) && (ae.ErrorCode() == "BadDigest" || ae.ErrorCode() == "ConditionalRequestConflict") {
		// ConditionalRequestConflict: 409 to a conditional write that met
		// another write of the same key in flight (worm.go).
		return true
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		if code := re.HTTPStatusCode(); code >= 500 || code == http.StatusTooManyRequests {
			return true
		}
	}
	// The SDK's own classification: connection errors, 500, 502, 503, 504,
	// throttling and timeout codes; cancellation is never retryable.
	return retry.IsErrorRetryables(retry.DefaultRetryables).IsErrorRetryable(err) == aws.TrueTernary
}

// Transient reports whether err is a failed S3 request that may succeed
// when repeated (isRetryable): the store is unreachable or overloaded, not
// refusing the request. Errors of other origins (a Kafka connection
// refused) are not the store's: false.
func Transient(err error) bool {
	var oe *smithy.OperationError
	return errors.As(err, &oe) && isRetryable(err)
}

// retrier runs requests with the store's retry policy.
type retrier struct {
	retries int           // attempts after the first
	backoff time.Duration // base backoff
	sleep   func(ctx context.Context, d time.Duration) error
	onRetry func(attempt int, wait time.Duration, err error)
}

// do calls fn until it succeeds, fails with a non-retryable error, or has
// failed 1+retries times. It returns the last error and the number of
// attempts made.
func (r retrier) do(ctx context.Context, fn func(ctx context.Context) error) (int, error) {
	for attempt := 1; ; attempt++ {
		err := fn(ctx)
		if err == nil {
			return attempt, nil
		}
		if attempt > r.retries || !isRetryable(err) || ctx.Err() != nil {
			return attempt, err
		}
		wait := Backoff(r.backoff, attempt, nil)
		if r.onRetry != nil {
			r.onRetry(attempt, wait, err)
		}
		if serr := r.sleep(ctx, wait); serr != nil {
			return attempt, errors.Join(err, serr)
		}
	}
}

// sleepCtx waits d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
