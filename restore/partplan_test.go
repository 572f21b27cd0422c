package restore

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/s3store"
)

// statFailStore hides one key from listings (hidingStore) and fails to
// look it up.
type statFailStore struct{ hidingStore }

func (h statFailStore) Stat(ctx context.Context, key string) (s3store.ObjectInfo, error) {
	if key == h.hide {
		return s3store.ObjectInfo{}, errors.New("the store is down")
	}
	return h.Store.Stat(ctx, key)
}

// TestPlanErrorIsNotTheIndexs: an error of planning a partition while
// its index is read (here: looking up an object the index names and the
// listing did not show) is reported as itself, not as a damaged index.
func TestPlanErrorIsNotTheIndexs(t *testing.T) {
	a := newArchive(t, format.NewJSON())
	k0 := a.putAt("src", 0, 0, 5)
	k1 := a.putAt("src", 0, 5, 5)
	a.writeIndex("src", 0, 10, indexedObj(k0, 0, 4), indexedObj(k1, 5, 9))
	r, err := New(readOnceConfig([]string{"127.0.0.1:1"}, a), statFailStore{hidingStore{a.store, k1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Plan(testContext(t))
	if err == nil || !strings.Contains(err.Error(), "look up \""+k1+"\"") || strings.Contains(err.Error(), "read the archive index") {
		t.Fatalf("err = %v, want the look-up of %q named, not the index", err, k1)
	}
}
