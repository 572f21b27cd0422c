package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/s3store"
)

func snap(topic string, timeMS int64) *Snapshot {
	return &Snapshot{
		Topic: topic, TimeMS: timeMS,
		EndOffsets: map[int32]int64{0: 10, 1: 0, 10: 7, 2: 3},
		Groups: map[string]map[int32]int64{
			"billing":   {0: 10, 10: 5},
			"analytics": {0: 0, 1: 0, 2: 3, 10: 7},
			"ü \"x\"":   {2: 1},
		},
	}
}

func TestSnapshotKeyRoundTrip(t *testing.T) {
	w := WriterOf("connect-orders")
	for _, tc := range []struct {
		prefix, topic string
		ms            int64
		writer, want  string
	}{
		{"_kafkas3/", "orders", 1700000000123, w, "_kafkas3/snapshots/orders/00000001700000000123-" + w + ".json"},
		{"_kafkas3/", "orders", 5, "", "_kafkas3/snapshots/orders/00000000000000000005.json"},
		{"a/snapshots/", "snapshots", 9223372036854775807, "0123456789ab", "a/snapshots/snapshots/snapshots/09223372036854775807-0123456789ab.json"},
	} {
		got := SnapshotKey(tc.prefix, tc.topic, tc.ms, tc.writer)
		if got != tc.want {
			t.Errorf("SnapshotKey = %q, want %q", got, tc.want)
		}
		n, err := ParseSnapshotKey(got)
		if err != nil {
			t.Fatalf("ParseSnapshotKey(%q): %v", got, err)
		}
		if want := (SnapshotName{got, tc.prefix, tc.topic, tc.ms, tc.writer}); n != want {
			t.Errorf("ParseSnapshotKey(%q) = %+v, want %+v", got, n, want)
		}
	}
}

func TestParseSnapshotKeyRejects(t *testing.T) {
	for _, key := range []string{
		"",
		"_kafkas3/snapshots/orders/00000001700000000123.jsonl",
		"_kafkas3/snapshot/orders/00000001700000000123.json",
		"_kafkas3/snapshots/00000001700000000123.json",
		"_kafkas3/snapshots/or ders/00000001700000000123.json",
		"_kafkas3/snapshots/orders/1700000000123.json",
		"_kafkas3/snapshots/orders/0000000170000000012x.json",
		"_kafkas3/snapshots/orders/99999999999999999999.json",
		"_kafkas3/snapshots/orders/00000001700000000123-.json",
		"_kafkas3/snapshots/orders/00000001700000000123-0123456789AB.json",
		"_kafkas3/snapshots/orders/00000001700000000123-0123456789ab-x.json",
		"_kafkas3/snapshots/orders/p/00000001700000000123.json",
	} {
		if _, err := ParseSnapshotKey(key); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), fmt.Sprintf("%q", key)) {
			t.Errorf("ParseSnapshotKey(%q) = %v, want ErrMalformed quoting the key", key, err)
		}
	}
}

// TestEncodeSnapshotPinned: the bytes are fixed: field order, partitions in
// numeric order (10 after 2), groups sorted, one line.
func TestEncodeSnapshotPinned(t *testing.T) {
	b, err := EncodeSnapshot(snap("orders", 1700000000123))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"v":1,"topic":"orders","time_ms":1700000000123,"end_offsets":{"0":10,"1":0,"2":3,"10":7},` +
		`"groups":{"analytics":{"0":0,"1":0,"2":3,"10":7},"billing":{"0":10,"10":5},"ü \"x\"":{"2":1}}}` + "\n"
	if string(b) != want {
		t.Fatalf("EncodeSnapshot =\n%s\nwant\n%s", b, want)
	}
	for i := 0; i < 20; i++ { // map order never leaks into the bytes
		again, _ := EncodeSnapshot(snap("orders", 1700000000123))
		if !bytes.Equal(again, b) {
			t.Fatalf("run %d gave other bytes:\n%s", i, again)
		}
	}
	key := SnapshotKey(DefaultPrefix, "orders", 1700000000123, "")
	got, err := DecodeSnapshot(key, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, snap("orders", 1700000000123)) {
		t.Fatalf("round trip: %+v", got)
	}
	// No groups: an empty object, and it decodes to an empty map.
	s := &Snapshot{Topic: "t", TimeMS: 0, EndOffsets: map[int32]int64{0: 0}}
	b, err = EncodeSnapshot(s)
	if err != nil || string(b) != `{"v":1,"topic":"t","time_ms":0,"end_offsets":{"0":0},"groups":{}}`+"\n" {
		t.Fatalf("EncodeSnapshot without groups = %q, %v", b, err)
	}
	got, err = DecodeSnapshot(SnapshotKey("p/", "t", 0, "0123456789ab"), bytes.NewReader(b))
	if err != nil || len(got.Groups) != 0 || got.Groups == nil {
		t.Fatalf("decode without groups = %+v, %v", got, err)
	}
}

func TestEncodeSnapshotRefusesInvalid(t *testing.T) {
	for name, mod := range map[string]func(s *Snapshot){
		"bad topic":            func(s *Snapshot) { s.Topic = "a b" },
		"negative time":        func(s *Snapshot) { s.TimeMS = -1 },
		"no partitions":        func(s *Snapshot) { s.EndOffsets = nil },
		"negative partition":   func(s *Snapshot) { s.EndOffsets[-1] = 0 },
		"negative end":         func(s *Snapshot) { s.EndOffsets[0] = -1 },
		"empty group":          func(s *Snapshot) { s.Groups[""] = map[int32]int64{0: 1} },
		"group without offset": func(s *Snapshot) { s.Groups["g"] = map[int32]int64{} },
		"unknown partition":    func(s *Snapshot) { s.Groups["g"] = map[int32]int64{3: 1} },
		"negative offset":      func(s *Snapshot) { s.Groups["g"] = map[int32]int64{0: -1} },
		"not utf-8":            func(s *Snapshot) { s.Groups["\xff"] = map[int32]int64{0: 1} },
	} {
		s := snap("orders", 1)
		mod(s)
		if _, err := EncodeSnapshot(s); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: EncodeSnapshot = %v, want ErrMalformed", name, err)
		}
	}
}

func TestDecodeSnapshotRejects(t *testing.T) {
	key := SnapshotKey(DefaultPrefix, "orders", 5, "")
	ok := `{"v":1,"topic":"orders","time_ms":5,"end_offsets":{"0":3},"groups":{"g":{"0":1}}}`
	if _, err := DecodeSnapshot(key, strings.NewReader(ok)); err != nil {
		t.Fatalf("the base case must decode: %v", err)
	}
	// Whitespace and field order are free.
	spaced := "{\n \"groups\": {\"g\": {\"0\": 1}},\n \"end_offsets\": {\"0\": 3},\n \"time_ms\": 5, \"topic\": \"orders\", \"v\": 1\n}\n"
	if _, err := DecodeSnapshot(key, strings.NewReader(spaced)); err != nil {
		t.Fatalf("spaced: %v", err)
	}
	for _, tc := range []struct {
		name, data, want string
	}{
		{"empty", ``, "line 1: ends early"},
		{"not an object", `[]`, `want "{"`},
		{"truncated", `{"v":1,"topic":"orders"`, "ends early"},
		{"version", strings.Replace(ok, `"v":1`, `"v":2`, 1), "version 2"},
		{"unknown field", strings.Replace(ok, `"v":1`, `"v":1,"x":1`, 1), `unknown field "x"`},
		{"repeated field", strings.Replace(ok, `"v":1`, `"v":1,"v":1`, 1), `"v" appears twice`},
		{"missing field", strings.Replace(ok, `,"groups":{"g":{"0":1}}`, ``, 1), `field "groups" is missing`},
		{"missing v", strings.Replace(ok, `"v":1,`, ``, 1), `field "v" is missing`},
		{"topic of another key", strings.Replace(ok, `"orders"`, `"other"`, 1), `topic "other" in the snapshot of topic "orders"`},
		{"time of another key", strings.Replace(ok, `"time_ms":5`, `"time_ms":6`, 1), "time_ms 6"},
		{"float offset", strings.Replace(ok, `{"0":3}`, `{"0":3.0}`, 1), "not an integer"},
		{"string offset", strings.Replace(ok, `{"0":3}`, `{"0":"3"}`, 1), "want an integer"},
		{"huge offset", strings.Replace(ok, `{"0":3}`, `{"0":99999999999999999999}`, 1), "not an integer"},
		{"partition not canonical", strings.Replace(ok, `{"0":3}`, `{"00":3}`, 1), `partition "00"`},
		{"negative partition", strings.Replace(ok, `{"0":3}`, `{"-1":3}`, 1), `partition "-1"`},
		{"repeated partition", strings.Replace(ok, `{"0":3}`, `{"0":3,"0":4}`, 1), `"0" appears twice`},
		{"repeated group", strings.Replace(ok, `{"g":{"0":1}}`, `{"g":{"0":1},"g":{"0":1}}`, 1), `"g" appears twice`},
		{"group on an unknown partition", strings.Replace(ok, `{"g":{"0":1}}`, `{"g":{"1":1}}`, 1), "partition 1 is not in end_offsets"},
		{"negative group offset", strings.Replace(ok, `{"g":{"0":1}}`, `{"g":{"0":-1}}`, 1), "negative"},
		{"group not an object", strings.Replace(ok, `{"g":{"0":1}}`, `{"g":1}`, 1), `group "g": want "{"`},
		{"trailing data", ok + "{}", "data after"},
		{"no partitions", strings.Replace(ok, `{"0":3}`, `{}`, 1), "no partition"},
		{"error on line 3", "{\"v\":1,\n\"topic\":\"orders\",\n\"time_ms\":x}", "line 3"},
	} {
		_, err := DecodeSnapshot(key, strings.NewReader(tc.data))
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: DecodeSnapshot = %v, want ErrMalformed naming the key and %q", tc.name, err, tc.want)
		}
	}
	if _, err := DecodeSnapshot("_kafkas3/snapshots/orders/5.json", strings.NewReader(ok)); !errors.Is(err, ErrMalformed) {
		t.Errorf("bad key: %v", err)
	}
}

func TestLoadSnapshot(t *testing.T) {
	ctx := context.Background()
	st := s3store.NewMemory()
	const p = "_kafkas3/"
	wa, wb := WriterOf("a"), WriterOf("b")
	for _, s := range []struct {
		ms     int64
		writer string
	}{{100, wa}, {300, wa}, {200, wb}, {300, wb}} {
		sn := snap("orders", s.ms)
		sn.EndOffsets[0] = s.ms // tells them apart
		b, err := EncodeSnapshot(sn)
		if err != nil {
			t.Fatal(err)
		}
		put(t, st, SnapshotKey(p, "orders", s.ms, s.writer), b)
	}
	// Another topic's snapshots, and an index object, are not listed.
	other, _ := EncodeSnapshot(snap("orders2", 999))
	put(t, st, SnapshotKey(p, "orders2", 999, wa), other)
	put(t, st, Key(p, "orders", 0, 3, ""), encode(t, entry("o+0", 0, 3, Run{0, 2})))

	names, err := ListSnapshots(ctx, st, p, "orders")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range names {
		got = append(got, fmt.Sprintf("%d-%s", n.TimeMS, n.Writer))
	}
	hi, lo := max(wa, wb), min(wa, wb)
	if want := []string{"300-" + hi, "300-" + lo, "200-" + wb, "100-" + wa}; !reflect.DeepEqual(got, want) {
		t.Fatalf("ListSnapshots = %v, want %v", got, want)
	}
	for _, tc := range []struct {
		at      int64
		wantKey string
	}{
		{-1, SnapshotKey(p, "orders", 300, hi)},
		{1 << 62, SnapshotKey(p, "orders", 300, hi)},
		{299, SnapshotKey(p, "orders", 200, wb)},
		{200, SnapshotKey(p, "orders", 200, wb)},
		{100, SnapshotKey(p, "orders", 100, wa)},
		{99, ""},
	} {
		s, key, err := LoadSnapshot(ctx, st, p, "orders", tc.at)
		if err != nil {
			t.Fatalf("at %d: %v", tc.at, err)
		}
		if key != tc.wantKey {
			t.Fatalf("at %d: key %q, want %q", tc.at, key, tc.wantKey)
		}
		if key == "" {
			if s != nil {
				t.Fatalf("at %d: a snapshot without a key", tc.at)
			}
			continue
		}
		n, _ := ParseSnapshotKey(key)
		if s.TimeMS != n.TimeMS || s.EndOffsets[0] != n.TimeMS {
			t.Fatalf("at %d: read %+v from %q", tc.at, s, key)
		}
	}
	if s, key, err := LoadSnapshot(ctx, st, p, "none", -1); s != nil || key != "" || err != nil {
		t.Fatalf("no snapshots: %v %q %v", s, key, err)
	}

	// A stray object fails the listing, naming it; a broken snapshot fails
	// the load, naming it.
	put(t, st, SnapshotTopicDir(p, "orders")+"junk.txt", []byte("x"))
	if _, err := ListSnapshots(ctx, st, p, "orders"); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "junk.txt") {
		t.Fatalf("stray object: %v", err)
	}
	st2 := s3store.NewMemory()
	bad := SnapshotKey(p, "orders", 5, wa)
	put(t, st2, bad, []byte(`{"v":1}`))
	if _, _, err := LoadSnapshot(ctx, st2, p, "orders", -1); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), bad) {
		t.Fatalf("broken snapshot: %v", err)
	}
	if _, _, err := LoadSnapshot(ctx, failStore{st}, p, "orders2", -1); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("store error: %v", err)
	}
}

func FuzzDecodeSnapshot(f *testing.F) {
	key := SnapshotKey(DefaultPrefix, "orders", 1700000000123, "")
	good, _ := EncodeSnapshot(snap("orders", 1700000000123))
	f.Add(good)
	f.Add([]byte(`{"v":1,"topic":"orders","time_ms":1700000000123,"end_offsets":{"0":1},"groups":{}}`))
	f.Add([]byte("{}"))
	f.Add([]byte(`{"groups":{"g":{"0":1,"0":2}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := DecodeSnapshot(key, bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		// What decodes encodes, and decodes to the same snapshot.
		b, err := EncodeSnapshot(s)
		if err != nil {
			t.Fatalf("a decoded snapshot does not encode: %v", err)
		}
		s2, err := DecodeSnapshot(key, bytes.NewReader(b))
		if err != nil || !reflect.DeepEqual(s, s2) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
