package restore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
)

// swapStore serves other bytes for one key from its second Open on: the
// object was replaced between the plan's proof and production.
type swapStore struct {
	s3store.Store
	key  string
	with []byte

	mu    sync.Mutex
	opens int
}

func (s *swapStore) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	if key == s.key {
		s.mu.Lock()
		s.opens++
		n := s.opens
		s.mu.Unlock()
		if n > 1 {
			return io.NopCloser(bytes.NewReader(s.with)), nil
		}
	}
	return s.Store.Open(ctx, key)
}

// TestTwinChangedBeforeProduction replaces a .keys or .headers twin with
// an object of the same size and record count between the plan and
// production: loading the object for production finds that the twin is
// not the one the plan proved and stops before producing anything of it,
// naming the twin, with and without an archive index.
func TestTwinChangedBeforeProduction(t *testing.T) {
	for _, tc := range []struct {
		part, orig, swapped string
	}{
		{index.PartKeys, "\"k1\"\n\"k2\"\n", "\"k1\"\n\"k9\"\n"},
		{index.PartHeaders, "[{\"key\":\"h\",\"value\":\"a\"}]\n[{\"key\":\"h\",\"value\":\"b\"}]\n", "[{\"key\":\"h\",\"value\":\"a\"}]\n[{\"key\":\"h\",\"value\":\"c\"}]\n"},
	} {
		for _, indexed := range []bool{false, true} {
			t.Run(tc.part+map[bool]string{false: "", true: ", indexed"}[indexed], func(t *testing.T) {
				brokers := newCluster(t, 1)
				a := newArchive(t, format.NewJSON())
				vkey := a.put("src", 0, 0, []*format.Record{{Value: []byte("\"v0\"")}, {Value: []byte("\"v1\"")}})
				twin := strings.TrimSuffix(vkey, ".json") + "." + tc.part + ".json"
				a.putRaw(twin, func(w io.Writer) { io.WriteString(w, tc.orig) })
				cfg := baseConfig(brokers, a.f, "src")
				cfg.Rename, cfg.CreateTopics = "dst", true
				if indexed {
					a.writeIndex("src", 0, 2, indexedObj(vkey, 0, 1))
					cfg = indexedConfig(brokers, a)
				}
				r, err := New(cfg, &swapStore{Store: a.store, key: twin, with: []byte(tc.swapped)}, nil)
				if err != nil {
					t.Fatal(err)
				}
				_, err = r.Run(testContext(t), nil)
				if !errors.Is(err, ErrDamagedObject) || !strings.Contains(err.Error(), twin) || !strings.Contains(err.Error(), "changed since the restore was planned") {
					t.Fatalf("err = %v, want the twin %q named as changed", err, twin)
				}
				if n := targetRecords(t, brokers, "dst"); n > 0 {
					t.Fatalf("target holds %d records, want none", n)
				}
			})
		}
	}
}

// indexedObj is the indexed value object key holding offsets first..last.
func indexedObj(key string, first, last int64) indexed {
	return indexed{key: key, runs: []index.Run{{First: first, Last: last}}, from: first}
}

// TestOneReadTwinChangedAfterPlan: reading each object once, the plan
// takes the index entry's word for an object whose listing and stored
// checksums match it; a .keys or .headers twin replaced after that (same
// size and record count) is found when the object is read to be produced,
// by the CRC32C its entry records for the twin, and nothing of the object
// is produced. The plan keeps only entryChecks of the entry by then: this
// fails if they lose a twin's checksum.
func TestOneReadTwinChangedAfterPlan(t *testing.T) {
	for _, tc := range []struct {
		part, orig, swapped string
	}{
		{index.PartKeys, "\"k1\"\n\"k2\"\n", "\"k1\"\n\"k9\"\n"},
		{index.PartHeaders, "[{\"key\":\"h\",\"value\":\"a\"}]\n[{\"key\":\"h\",\"value\":\"b\"}]\n", "[{\"key\":\"h\",\"value\":\"a\"}]\n[{\"key\":\"h\",\"value\":\"c\"}]\n"},
	} {
		t.Run(tc.part, func(t *testing.T) {
			brokers := newCluster(t, 1)
			a := newArchive(t, format.NewJSON())
			vkey := a.put("src", 0, 0, []*format.Record{{Value: []byte("\"v0\"")}, {Value: []byte("\"v1\"")}})
			twin := strings.TrimSuffix(vkey, ".json") + "." + tc.part + ".json"
			a.putRaw(twin, func(w io.Writer) { io.WriteString(w, tc.orig) })
			a.writeIndex("src", 0, 2, indexedObj(vkey, 0, 1))
			cfg := readOnceConfig(brokers, a)
			// The plan reads no object; every open is production's.
			swapped := &swapStore{Store: a.store, key: twin, with: []byte(tc.swapped), opens: 1}
			r, err := New(cfg, swapped, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.Run(testContext(t), nil)
			if !errors.Is(err, ErrDamagedObject) || !strings.Contains(err.Error(), twin) || !strings.Contains(err.Error(), "CRC32C") {
				t.Fatalf("err = %v, want the twin %q named with its CRC32C", err, twin)
			}
			if n := targetRecords(t, brokers, "dst"); n > 0 {
				t.Fatalf("target holds %d records, want none", n)
			}
		})
	}
}
