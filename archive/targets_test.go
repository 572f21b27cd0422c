package archive

import (
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/outage"
)

// TestListedEvery: --once refuses to take a topic whose end offsets were
// not listed for any partition as one with nothing to archive; the error
// names the topic and is one the session retries (a broker's, transient).
func TestListedEvery(t *testing.T) {
	targets := map[tp]int64{{"a", 0}: 5, {"a", 1}: 0}
	if err := listedEvery([]string{"a"}, targets); err != nil {
		t.Fatalf("every topic listed: %v", err)
	}
	err := listedEvery([]string{"a", "b"}, targets)
	if err == nil {
		t.Fatal("topic b has no partition listed, and no error")
	}
	if want := "topic b: no partition listed"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q lacks %q", err, want)
	}
	if !outage.Transient(err) {
		t.Errorf("error %v is not retried as transient", err)
	}
}
