package restore

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/twmb/franz-go/pkg/kgo"
)

// filterArchive writes 4 partitions of 10 objects of 500 records (keys
// k0..k2; a header h, even or odd, but on every fifth offset; timestamps
// one a second) and
// returns them by partition.
func filterArchive(t *testing.T, a *archive) map[int32][]*format.Record {
	t.Helper()
	all := map[int32][]*format.Record{}
	for p := range int32(4) {
		for o := range 10 {
			recs := make([]*format.Record, 500)
			for i := range recs {
				n := o*500 + i
				recs[i] = &format.Record{Key: fmt.Appendf(nil, "k%d", n%3), Value: fmt.Appendf(nil, "p%d-%d", p, n), Timestamp: timeAt(n)}
				switch {
				case n%5 == 0: // no header
				case n%2 == 0:
					recs[i].Headers = []format.Header{{Key: "h", Value: []byte("even")}}
				default:
					recs[i].Headers = []format.Header{{Key: "h", Value: []byte("odd")}}
				}
			}
			a.put("src", p, int64(o*500), recs)
			all[p] = append(all[p], recs...)
		}
	}
	return all
}

// kept is all less what f leaves out, and the count left out.
func kept(r *Restorer, all map[int32][]*format.Record) (map[int32][]*format.Record, int64) {
	out := map[int32][]*format.Record{}
	var dropped int64
	for p, recs := range all {
		for _, rec := range recs {
			if r.keeps(rec) {
				out[p] = append(out[p], rec)
			} else {
				dropped++
			}
		}
	}
	return out, dropped
}

// TestFilteredRestoreResumes: restores with each record filter (key
// regex, header, header value, --from, the erasure list dropped), each
// interrupted in the middle of objects twice and run again: the plan
// (which reads every object: the whole-archive proof) counts the records
// the filter leaves out; after every interrupted run each target
// partition holds an exact prefix of the filtered archive, the last run completes it with no duplicate and no
// record the filter leaves out, and counts what it left out; a run after
// completion produces nothing.
func TestFilteredRestoreResumes(t *testing.T) {
	for _, c := range []struct {
		name string
		f    Filter
	}{
		{"key regex", Filter{KeyRegex: regexp.MustCompile("^(?:k[02])$")}},
		{"header", Filter{Header: "h"}},
		{"header value", Filter{Header: "h", HeaderValue: []byte("odd"), HeaderHasValue: true}},
		{"from", Filter{From: timeAt(1234)}},
		{"drop listed keys", Filter{DropKeys: true}},
	} {
		t.Run(c.name, func(t *testing.T) { filteredResume(t, c.f) })
	}
}

func filteredResume(t *testing.T, f Filter) {
	brokers := newCluster(t, 4, "dst")
	a := newArchive(t, fullFormat{})
	all := filterArchive(t, a)
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename, cfg.Filter, cfg.Parallelism = "dst", f, 2
	if f.DropKeys {
		cfg.ExcludeKeys = map[string]struct{}{"k1": {}}
	}
	cfg.KafkaOpts = []kgo.Opt{kgo.ProducerLinger(0), kgo.MaxBufferedRecords(300)}
	want, dropped := kept(mustNew(t, cfg, a, nil), all)
	total := 0
	for _, recs := range want {
		total += len(recs)
	}
	held := cancelRuns(t, cfg, a, brokers, want, 40+12, 40+26) // the plan's proof opens the 40 objects first
	if held >= total {
		t.Fatalf("the cancelled runs restored all %d records", total)
	}
	r := mustNew(t, cfg, a, nil)
	if text, want := planText(t, r), fmt.Sprintf("it leaves out %d archived records", dropped); !strings.Contains(text, "filter: only records with ") || !strings.Contains(text, want) {
		t.Fatalf("the plan does not show the filter and %q:\n%s", want, text)
	}
	sum, err := r.Run(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := readTopic(t, brokers, "dst")
	for p := range int32(4) {
		checkValues(t, fmt.Sprintf("dst/%d", p), got[p], want[p])
	}
	if sum.Records != int64(total-held) || sum.AlreadyPresent != int64(held) || sum.Filtered != dropped {
		t.Fatalf("final run: %d records, %d already present, %d filtered; want %d, %d, %d",
			sum.Records, sum.AlreadyPresent, sum.Filtered, total-held, held, dropped)
	}
	sum, err = mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records != 0 || sum.AlreadyPresent != int64(total) {
		t.Fatalf("run after completion: %d records produced, %d present", sum.Records, sum.AlreadyPresent)
	}
}

// TestRestoreGroupsUnderFilter: --restore-groups with a key filter
// commits each group at the target offset of the first restored record at
// or after its source offset, counting only the records the filter kept:
// partition 0 holds offsets 0-9, the filter keeps 0 1 4 5 8 9 (restored
// at 0..5). A re-run commits the same offsets.
func TestRestoreGroupsUnderFilter(t *testing.T) {
	brokers := newCluster(t, 1, "dst")
	a := newArchive(t, fullFormat{})
	var recs []*format.Record
	for n := range 10 {
		key := "keep"
		if n%4 == 2 || n%4 == 3 {
			key = "drop"
		}
		recs = append(recs, &format.Record{Key: []byte(key), Value: fmt.Appendf(nil, "v-%d", n), Timestamp: timeAt(n)})
	}
	key := a.put("src", 0, 0, recs)
	a.writeIndex("src", 0, 10, indexed{key: key, runs: []index.Run{{First: 0, Last: 9}}})
	a.putGroupSnapshot("src", 1000, map[int32]int64{0: 10}, map[string]map[int32]int64{
		"g-a": {0: 0}, "g-b": {0: 2}, "g-c": {0: 5}, "g-d": {0: 7}, "g-e": {0: 10}, "g-f": {0: 50},
	})
	cfg := indexedConfig(brokers, a)
	cfg.RestoreGroups = true
	cfg.Filter.KeyRegex = regexp.MustCompile("^(?:keep)$")
	want := map[string]map[int32]int64{"g-a": {0: 0}, "g-b": {0: 2}, "g-c": {0: 3}, "g-d": {0: 4}, "g-e": {0: 6}, "g-f": {0: 6}}
	for run := range 2 {
		sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Groups != 6 || sum.Filtered != 4 {
			t.Fatalf("run %d: %d groups, %d filtered; want 6 and 4", run, sum.Groups, sum.Filtered)
		}
		for g, offs := range want {
			if got := committedGroup(t, brokers, g, "dst"); !reflect.DeepEqual(got, offs) {
				t.Errorf("run %d: group %s committed %v, want %v", run, g, got, offs)
			}
		}
	}
	got := readTopic(t, brokers, "dst")[0]
	for i, v := range []string{"v-0", "v-1", "v-4", "v-5", "v-8", "v-9"} {
		if string(got[i].Value) != v {
			t.Fatalf("dst/0 offset %d holds %q, want %q", i, got[i].Value, v)
		}
	}
	// Group b reads v-4 next, the first kept record at or after its
	// source offset 2.
	if v := string(got[want["g-b"][0]].Value); v != "v-4" {
		t.Fatalf("g-b reads %q next, want v-4", v)
	}
}

// planText is r's plan as --dry-run prints it.
func planText(t *testing.T, r *Restorer) string {
	t.Helper()
	plan, err := r.Plan(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := plan.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	return text.String()
}

// TestFromNeedsTimestamps: --from on an archive whose records carry no
// timestamp (plain JSON values, not envelopes) would leave every record
// out; the run is refused before producing, naming an object.
func TestFromNeedsTimestamps(t *testing.T) {
	brokers := newCluster(t, 1, "dst")
	a := newArchive(t, format.NewJSON())
	key := a.put("src", 0, 0, []*format.Record{{Value: []byte(`{"a":1}`)}, {Value: []byte(`{"a":2}`)}})
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename, cfg.Filter = "dst", Filter{From: timeAt(0)}
	_, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if !errors.Is(err, ErrNoTimestamps) || !strings.Contains(err.Error(), key) {
		t.Fatalf("err = %v, want ErrNoTimestamps naming %q", err, key)
	}
	if n := len(readTopic(t, brokers, "dst")[0]); n != 0 {
		t.Fatalf("%d records produced", n)
	}
}

// TestKeyMatchingNeedsArchivedKeys: the erasure list and --key-regex match
// keys as archived; with typed keys framed for a target registry
// (Config.KeyEncoder) they would match nothing, so New refuses them.
func TestKeyMatchingNeedsArchivedKeys(t *testing.T) {
	a := newArchive(t, fullFormat{})
	for _, edit := range []func(*Config){
		func(c *Config) { c.ExcludeKeys = map[string]struct{}{"k": {}} },
		func(c *Config) { c.Filter.KeyRegex = regexp.MustCompile("k.*") },
	} {
		cfg := baseConfig([]string{"127.0.0.1:9"}, a.f, "src")
		cfg.KeyEncoder = fakeEncoder{}
		edit(&cfg)
		if _, err := New(cfg, a.store, nil); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "typed keys") {
			t.Fatalf("err = %v, want the combination refused", err)
		}
	}
}

// fakeEncoder frames nothing; it stands for a target registry.
type fakeEncoder struct{}

func (fakeEncoder) EncodeRaw(context.Context, string, *format.Schema, []byte) ([]byte, error) {
	return nil, errors.New("not used")
}
