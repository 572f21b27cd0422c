package format

import (
	"errors"
	"strings"
	"testing"
)

// TestRecoverParquet: a panic inside parquet-go becomes a malformed-file
// error; a panic with an error value keeps it in the chain.
func TestRecoverParquet(t *testing.T) {
	cause := errors.New("index out of range")
	run := func(v any) (err error) {
		defer recoverParquet(&err)
		panic(v)
	}
	if err := run(cause); !errors.Is(err, errCorrupt) || !errors.Is(err, cause) {
		t.Errorf("error panic: %v", err)
	}
	if err := run("boom"); !errors.Is(err, errCorrupt) || !strings.Contains(err.Error(), "boom") {
		t.Errorf("string panic: %v", err)
	}
}
