package restore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/kafkas3/kafkas3/s3store"
)

// delete removes key from the archive (the memory store cannot delete: the
// archive is copied without it).
func (a *archive) delete(key string) {
	a.t.Helper()
	old := a.store
	a.store = s3store.NewMemory()
	err := old.List(context.Background(), "", func(info s3store.ObjectInfo) error {
		if info.Key == key {
			return nil
		}
		rc, err := old.Open(context.Background(), info.Key)
		if err != nil {
			return err
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			return err
		}
		a.putRaw(info.Key, func(w io.Writer) { w.Write(b) })
		return nil
	})
	if err != nil {
		a.t.Fatal(err)
	}
}

// indexed describes one object for writeIndex.
type indexed struct {
	key  string
	runs []index.Run
	from int64 // first offset the sink read for it
}

// describe returns the size and SHA-256 of a stored object.
func (a *archive) describe(key string) index.Object {
	a.t.Helper()
	b := a.read(key)
	sum := sha256.Sum256(b)
	o := index.Object{Key: key, Size: int64(len(b)), CRC32C: index.FormatCRC32C(crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))}
	switch a.digest {
	case "sha256":
		o.SHA256 = hex.EncodeToString(sum[:])
	case "v1":
		o.CRC32C, o.SHA256 = "", hex.EncodeToString(sum[:])
	}
	if a.digest != "v1" {
		// The ETag the store answered, as the sink records it.
		info, err := a.store.Stat(context.Background(), key)
		if err != nil {
			a.t.Fatal(err)
		}
		o.ETag = info.ETag
	}
	return o
}

// version is the entry version of a.digest.
func (a *archive) version() int {
	if a.digest == "v1" {
		return index.Version1
	}
	return index.Version
}

// writeIndex writes one index object of topic/p with commit, one entry per
// object (with the .keys/.headers twins found in the store).
func (a *archive) writeIndex(topic string, p int32, commit int64, objs ...indexed) {
	a.t.Helper()
	var entries []index.Entry
	for _, o := range objs {
		main := a.describe(o.key)
		e := index.Entry{V: a.version(), Topic: topic, Partition: p, Key: o.key, Objects: []index.Object{main},
			Runs: o.runs, From: o.from, Commit: commit}
		for _, r := range o.runs {
			e.Records += r.Len()
		}
		ext := a.f.Extension()
		base := strings.TrimSuffix(o.key, ext)
		for _, part := range []string{index.PartKeys, index.PartHeaders} {
			key := base + "." + part + ext
			if _, err := a.store.Stat(context.Background(), key); err == nil {
				ob := a.describe(key)
				ob.Part = part
				e.Objects = append(e.Objects, ob)
			} else if !errors.Is(err, s3store.ErrNotExist) {
				a.t.Fatal(err)
			}
		}
		entries = append(entries, e)
	}
	b, err := index.Encode(entries)
	if err != nil {
		a.t.Fatal(err)
	}
	a.putRaw(index.Key(index.DefaultPrefix, topic, p, commit, ""), func(w io.Writer) { w.Write(b) })
}

// putRecs writes an object of topic/p named with start holding the
// records of the given offsets ("v-<offset>"), in folder enc.
func (a *archive) putRecs(topic string, p int32, enc string, offsets ...int64) string {
	a.t.Helper()
	recs := make([]*format.Record, len(offsets))
	for i, off := range offsets {
		recs[i] = &format.Record{Value: fmt.Appendf(nil, "v-%d", off)}
	}
	key := a.keys.ObjectKey(partition.ObjectName{Topic: topic, Encoded: enc, Partition: p, StartOffset: offsets[0], Ext: a.f.Extension()})
	a.putRaw(key, func(w io.Writer) {
		rw, _ := a.f.NewWriter(w)
		for _, r := range recs {
			if err := rw.Write(r); err != nil {
				a.t.Fatal(err)
			}
		}
		rw.Close()
	})
	return key
}

func offsetsRecords(offsets ...int64) []*format.Record {
	out := make([]*format.Record, len(offsets))
	for i, off := range offsets {
		out[i] = &format.Record{Value: fmt.Appendf(nil, "v-%d", off)}
	}
	return out
}

func indexedConfig(brokers []string, a *archive) Config {
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename, cfg.CreateTopics, cfg.IndexPrefix = "dst", true, index.DefaultPrefix
	return cfg
}

// TestIndexedRestoreAcrossFoldersAndOverlaps: a partition spread over two
// folders by a field partitioner (even offsets in one, odd in the other),
// offsets skipped by compaction (5 is absent), and a second sink run that
// overlaps: every archived offset is restored once, in offset order, with
// its record, and the plan shows the partition complete.
func TestIndexedRestoreAcrossFoldersAndOverlaps(t *testing.T) {
	brokers := newCluster(t, 1)
	a := newArchive(t, format.NewJSON())
	even := a.putRecs("src", 0, "kind=even", 0, 2, 4, 6)
	odd := a.putRecs("src", 0, "kind=odd", 1, 3, 7) // 5 compacted away
	a.writeIndex("src", 0, 8,
		indexed{key: even, runs: []index.Run{{First: 0, Last: 0}, {First: 2, Last: 2}, {First: 4, Last: 4}, {First: 6, Last: 6}}},
		indexed{key: odd, runs: []index.Run{{First: 1, Last: 1}, {First: 3, Last: 3}, {First: 7, Last: 7}}})
	// A second run re-archived 6..9 into one folder.
	again := a.putRecs("src", 0, "kind=all", 6, 7, 8, 9)
	a.writeIndex("src", 0, 10, indexed{key: again, runs: []index.Run{{First: 6, Last: 9}}, from: 6})

	r := mustNew(t, indexedConfig(brokers, a), a, nil)
	plan, err := r.Plan(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	pp := plan.Topics[0].Parts[0]
	if pp.Basis != BasisIndex || !pp.Complete() || pp.Records != 9 || pp.Duplicates != 2 || len(pp.Gaps) != 0 {
		t.Fatalf("plan: basis %q complete %v records %d duplicates %d gaps %v damaged %v", pp.Basis, pp.Complete(), pp.Records, pp.Duplicates, pp.Gaps, pp.Damaged)
	}
	var text bytes.Buffer
	plan.WriteText(&text)
	if !strings.Contains(text.String(), "yes: archive index") {
		t.Fatalf("plan text:\n%s", text.String())
	}
	sum, err := r.Run(testContext(t), nil)
	if err != nil || sum.Records != 9 {
		t.Fatalf("%+v, %v", sum, err)
	}
	checkValues(t, "dst/0", readTopic(t, brokers, "dst")[0], offsetsRecords(0, 1, 2, 3, 4, 6, 7, 8, 9))
}

// TestIndexedDamageAndGaps: with an index, an object whose bytes differ
// (one flipped byte in a plain JSON object: only the checksum can tell,
// whichever the entries give: CRC32C, both, a v1 entry's SHA-256), an
// object deleted from the store, and offsets no index entry accounts for
// each stop the run before anything is produced; with AllowGaps the rest
// is restored and every gap reported, naming the object.
func TestIndexedDamageAndGaps(t *testing.T) {
	flip := func(a *archive, keys []string) {
		a.damage(keys[1], func(b []byte) []byte { b[3] ^= 0x01; return b }) // "v-5" becomes "v-4"...
	}
	for _, tc := range []struct {
		name    string
		digest  string
		setup   func(a *archive, keys []string)
		gap     Gap
		wantErr error
	}{
		{"flipped byte", "", flip, Gap{First: 5, Last: 9}, ErrDamagedObject},
		{"flipped byte, sha256", "sha256", flip, Gap{First: 5, Last: 9}, ErrDamagedObject},
		{"flipped byte, v1", "v1", flip, Gap{First: 5, Last: 9}, ErrDamagedObject},
		{"deleted object", "", func(a *archive, keys []string) {
			a.delete(keys[1])
		}, Gap{First: 5, Last: 9}, ErrDamagedObject},
		{"deleted index object", "", func(a *archive, keys []string) {
			a.delete(index.Key(index.DefaultPrefix, "src", 0, 10, ""))
			a.delete(keys[1])
		}, Gap{First: 5, Last: 9, Unaccounted: true}, ErrGaps},
	} {
		t.Run(tc.name, func(t *testing.T) {
			brokers := newCluster(t, 1)
			a := newArchive(t, format.NewJSON())
			a.digest = tc.digest
			var keys []string
			for i, start := range []int{0, 5, 10} {
				keys = append(keys, a.putAt("src", 0, start, 5))
				a.writeIndex("src", 0, int64(start+5), indexed{key: keys[i], runs: []index.Run{{First: int64(start), Last: int64(start + 4)}}, from: int64(start)})
			}
			tc.setup(a, keys)
			if tc.gap.Object != "" || !tc.gap.Unaccounted {
				tc.gap.Object = keys[1]
			}
			cfg := indexedConfig(brokers, a)
			plan, err := mustNew(t, cfg, a, nil).Plan(testContext(t))
			if err != nil {
				t.Fatal(err)
			}
			pp := plan.Topics[0].Parts[0]
			if len(pp.Gaps) != 1 || pp.Gaps[0] != tc.gap || pp.Complete() {
				t.Fatalf("gaps %+v, want %+v; damaged %v", pp.Gaps, tc.gap, pp.Damaged)
			}
			_, err = mustNew(t, cfg, a, nil).Run(testContext(t), nil)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if n := targetRecords(t, brokers, "dst"); n != -1 {
				t.Fatalf("target holds %d records (-1: absent)", n)
			}
			cfg.AllowGaps = true
			sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
			if err != nil || len(sum.Gaps) != 1 || sum.Gaps[0].Gap != tc.gap {
				t.Fatalf("allow gaps: %+v, %v", sum, err)
			}
			checkOffsets(t, "dst/0", readTopic(t, brokers, "dst")[0], [2]int{0, 4}, [2]int{10, 14})
		})
	}
}

// TestIndexedCountMismatch: an object holding another record count than
// its index entry (replaced by a shorter one of the same size) is damaged.
func TestIndexedCountMismatch(t *testing.T) {
	a := newArchive(t, format.NewJSON())
	key := a.putAt("src", 0, 0, 3)
	a.writeIndex("src", 0, 4, indexed{key: key, runs: []index.Run{{First: 0, Last: 3}}}) // says 4 records
	cfg := indexedConfig(nil, a)
	cfg.DryRun = true
	plan, err := mustNew(t, cfg, a, nil).Plan(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	pp := plan.Topics[0].Parts[0]
	if len(pp.Damaged) != 1 || !strings.Contains(pp.Damaged[0].Err.Error(), "holds 3 records, the archive index says 4") {
		t.Fatalf("damaged %v", pp.Damaged)
	}
}

// TestIndexedOlderEntryMatches: a second sink run with a smaller
// flush.size rewrote object +0 with fewer records and a lower commit than
// the first run's entry for it. The object matches its older entry, so it
// is restored as what it holds, not reported damaged, and the partition is
// shown complete.
func TestIndexedOlderEntryMatches(t *testing.T) {
	brokers := newCluster(t, 1)
	a := newArchive(t, format.NewJSON())
	first := a.putAt("src", 0, 0, 5) // run 1: 0..4
	a.writeIndex("src", 0, 5, indexed{key: first, runs: []index.Run{{First: 0, Last: 4}}})
	k5 := a.putAt("src", 0, 5, 5)
	a.writeIndex("src", 0, 10, indexed{key: k5, runs: []index.Run{{First: 5, Last: 9}}, from: 5})
	again := a.putAt("src", 0, 0, 3) // run 2 rewrites +0: 0..2
	if again != first {
		t.Fatal("the rewrite has another key")
	}
	a.writeIndex("src", 0, 3, indexed{key: again, runs: []index.Run{{First: 0, Last: 2}}})
	k3 := a.putAt("src", 0, 3, 3)
	a.writeIndex("src", 0, 6, indexed{key: k3, runs: []index.Run{{First: 3, Last: 5}}, from: 3})

	r := mustNew(t, indexedConfig(brokers, a), a, nil)
	plan, err := r.Plan(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	pp := plan.Topics[0].Parts[0]
	if !pp.Complete() || pp.Records != 10 || pp.Duplicates != 1 || len(pp.Damaged) != 0 {
		t.Fatalf("complete %v records %d duplicates %d gaps %v damaged %v", pp.Complete(), pp.Records, pp.Duplicates, pp.Gaps, pp.Damaged)
	}
	if _, err := r.Run(testContext(t), nil); err != nil {
		t.Fatal(err)
	}
	checkOffsets(t, "dst/0", readTopic(t, brokers, "dst")[0], [2]int{0, 9})
}
