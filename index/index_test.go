package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/kafkas3/kafkas3/s3store"
)

const sha = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// crc is the CRC32C of "123456789" (0xe3069283), as S3 prints it.
const crc = "4waSgw=="

// entry builds a valid value entry of orders/0 holding runs, read in
// [from, commit-1].
func entry(key string, from, commit int64, runs ...Run) Entry {
	var n int64
	for _, r := range runs {
		n += r.Len()
	}
	return Entry{
		V: Version, Topic: "orders", Partition: 0, Key: key,
		Objects: []Object{{Key: key, Part: PartValue, Size: 10, CRC32C: crc}},
		Runs:    runs, Records: n, From: from, Commit: commit, MinTS: 1, MaxTS: 2,
	}
}

func TestKeyRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		prefix, topic string
		p             int32
		commit        int64
		writer        string
		want          string
	}{
		{"_kafkas3/", "orders", 0, 104, "", "_kafkas3/index/orders/0/00000000000000000104.jsonl"},
		{"_kafkas3/", "orders", 0, 104, WriterOf("connect-orders"), "_kafkas3/index/orders/0/00000000000000000104-" + WriterOf("connect-orders") + ".jsonl"},
		{"a/b/", "x.y_z-1", 2147483647, 9223372036854775807, "0123456789ab", "a/b/index/x.y_z-1/2147483647/09223372036854775807-0123456789ab.jsonl"},
		{"index/", "index", 3, 0, "", "index/index/index/3/00000000000000000000.jsonl"},
	} {
		got := Key(tc.prefix, tc.topic, tc.p, tc.commit, tc.writer)
		if got != tc.want {
			t.Errorf("Key = %q, want %q", got, tc.want)
		}
		n, err := ParseKey(got)
		if err != nil {
			t.Fatalf("ParseKey(%q): %v", got, err)
		}
		if want := (KeyName{tc.prefix, tc.topic, tc.p, tc.commit, tc.writer}); n != want {
			t.Errorf("ParseKey(%q) = %+v, want %+v", got, n, want)
		}
	}
}

func TestParseKeyRejects(t *testing.T) {
	for _, key := range []string{
		"",
		"_kafkas3/index/orders/0/00000000000000000104.json",
		"_kafkas3/index/orders/00000000000000000104.jsonl",
		"_kafkas3/idx/orders/0/00000000000000000104.jsonl",
		"_kafkas3/index/or ders/0/00000000000000000104.jsonl",
		"_kafkas3/index/orders/01/00000000000000000104.jsonl",
		"_kafkas3/index/orders/-1/00000000000000000104.jsonl",
		"_kafkas3/index/orders/0/104.jsonl",
		"_kafkas3/index/orders/0/0000000000000000010x.jsonl",
		"_kafkas3/index/orders/0/99999999999999999999.jsonl",
		"_kafkas3/index/../0/00000000000000000104.jsonl",
		"_kafkas3/index/orders/0/00000000000000000104-.jsonl",
		"_kafkas3/index/orders/0/00000000000000000104-0123456789AB.jsonl",
		"_kafkas3/index/orders/0/00000000000000000104-0123456789a.jsonl",
		"_kafkas3/index/orders/0/00000000000000000104-0123456789abc.jsonl",
		"_kafkas3/index/orders/0/00000000000000000104-0123456789ab-x.jsonl",
	} {
		if _, err := ParseKey(key); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), fmt.Sprintf("%q", key)) {
			t.Errorf("ParseKey(%q) = %v, want ErrMalformed quoting the key", key, err)
		}
	}
}

func TestValidatePrefix(t *testing.T) {
	for p, ok := range map[string]bool{
		"_kafkas3/": true, "a/b/": true, "": false, "_kafkas3": false, "/abs/": false, "a//b/": false, "../x/": false,
	} {
		if err := ValidatePrefix(p); (err == nil) != ok {
			t.Errorf("ValidatePrefix(%q) = %v, want ok=%v", p, err, ok)
		}
	}
}

func TestEntryOffset(t *testing.T) {
	e := entry("k", 100, 104, Run{100, 101}, Run{103, 103})
	for i, want := range []int64{100, 101, 103, -1} {
		if got := e.Offset(int64(i)); got != want {
			t.Errorf("Offset(%d) = %d, want %d", i, got, want)
		}
	}
	if e.Offset(-1) != -1 {
		t.Errorf("Offset(-1) != -1")
	}
}

func TestEncodeDeterministicAndRoundTrip(t *testing.T) {
	a := entry("topics/orders/partition=0/orders+0+0000000000.json", 0, 10, Run{0, 4})
	b := entry("topics/orders/partition=1x/orders+0+0000000005.json", 0, 10, Run{5, 9})
	b.Tombstone = true
	b.Objects = []Object{{Key: b.Key, Part: PartKeys, Size: 3, CRC32C: crc, SHA256: sha}, {Key: "h", Part: PartHeaders, Size: 0, CRC32C: "AAAAAA=="}}
	b.Envelope = true
	x, err := Encode([]Entry{b, a})
	if err != nil {
		t.Fatal(err)
	}
	y, err := Encode([]Entry{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(x, y) {
		t.Fatalf("Encode depends on the input order:\n%s\n%s", x, y)
	}
	wantLine := `{"v":2,"topic":"orders","partition":0,"key":"topics/orders/partition=0/orders+0+0000000000.json",` +
		`"objects":[{"key":"topics/orders/partition=0/orders+0+0000000000.json","part":"","size":10,"crc32c":"` + crc + `"}],` +
		`"runs":[[0,4]],"records":5,"from":0,"commit":10,"min_ts":1,"max_ts":2,"envelope":false,"tombstone":false}` + "\n"
	if !strings.HasPrefix(string(x), wantLine) {
		t.Fatalf("first line:\n%s\nwant\n%s", x, wantLine)
	}
	got, err := Decode(Key("_kafkas3/", "orders", 0, 10, ""), bytes.NewReader(x))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []Entry{a, b}) {
		t.Fatalf("Decode(Encode) = %+v, want %+v", got, []Entry{a, b})
	}
}

func TestEncodeRejects(t *testing.T) {
	a := entry("k", 0, 10, Run{0, 4})
	bad := a
	bad.Records = 4
	for name, es := range map[string][]Entry{
		"empty":     nil,
		"invalid":   {bad},
		"duplicate": {a, a},
	} {
		if _, err := Encode(es); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: Encode = %v, want ErrMalformed", name, err)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	key := Key("_kafkas3/", "orders", 0, 10, "")
	good, err := Encode([]Entry{entry("k", 0, 10, Run{0, 4})})
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSuffix(string(good), "\n")
	repl := func(old, new string) string { return strings.Replace(line, old, new, 1) + "\n" }
	for _, tc := range []struct {
		name, data string
		line       int
		want       string
	}{
		{"empty", "", 0, "is empty"},
		{"no newline", line, 1, "newline"},
		{"blank line", string(good) + "\n", 2, "is empty"},
		{"not json", "{\n", 1, ""},
		{"unknown field", repl(`"v":2,`, `"v":2,"extra":1,`), 1, "extra"},
		{"trailing data", line + " {}\n", 1, "after the entry"},
		{"version", repl(`"v":2`, `"v":3`), 1, "v is 3"},
		{"v0", repl(`"v":2`, `"v":0`), 1, "v is 0"},
		{"bad topic", repl(`"topic":"orders"`, `"topic":"a b"`), 1, "topic"},
		{"other topic", repl(`"topic":"orders"`, `"topic":"other"`), 1, "other"},
		{"other partition", repl(`"partition":0`, `"partition":1`), 1, "partition 1"},
		{"other commit", repl(`"commit":10`, `"commit":11`), 1, "commit 11"},
		{"negative partition", repl(`"partition":0`, `"partition":-1`), 1, "negative"},
		{"no key", repl(`"key":"k","objects"`, `"key":"","objects"`), 1, "key is empty"},
		{"no objects", repl(`"objects":[{"key":"k","part":"","size":10,"crc32c":"`+crc+`"}]`, `"objects":[]`), 1, "objects is empty"},
		{"bad part", repl(`"part":""`, `"part":"value"`), 1, "part"},
		{"no crc32c", repl(`,"crc32c":"`+crc+`"`, ``), 1, "crc32c is missing"},
		{"empty crc32c", repl(crc, ``), 1, "crc32c is missing"},
		{"crc32c not base64", repl(crc, "4waSg*=="), 1, "crc32c"},
		{"crc32c of 3 bytes", repl(crc, "4waS"), 1, "crc32c"},
		{"crc32c of 5 bytes", repl(crc, "4waSgwA="), 1, "crc32c"},
		{"crc32c unpadded", repl(crc, "4waSgw"), 1, "crc32c"},
		{"crc32c non-canonical", repl(crc, "4waSgx=="), 1, "crc32c"},
		{"bad optional sha", repl(`"crc32c":"`+crc+`"`, `"crc32c":"`+crc+`","sha256":"E3`+sha[2:]+`"`), 1, "sha256"},
		{"negative size", repl(`"size":10`, `"size":-1`), 1, "negative"},
		{"value key differs", repl(`{"key":"k","part"`, `{"key":"j","part"`), 1, "entry's key"},
		{"tombstone with value", repl(`"tombstone":false`, `"tombstone":true`), 1, "tombstone"},
		{"no runs", repl(`"runs":[[0,4]]`, `"runs":[]`), 1, "runs is empty"},
		{"run of three", repl(`"runs":[[0,4]]`, `"runs":[[0,4,5]]`), 1, "run"},
		{"reversed run", repl(`"runs":[[0,4]]`, `"runs":[[4,0]]`), 1, "runs[0]"},
		{"touching runs", repl(`"runs":[[0,4]]`, `"runs":[[0,1],[2,4]]`), 1, "runs[1]"},
		{"unsorted runs", repl(`"runs":[[0,4]]`, `"runs":[[3,4],[0,1]]`), 1, "runs[1]"},
		{"records", repl(`"records":5`, `"records":6`), 1, "records is 6"},
		{"from above first", repl(`"from":0`, `"from":1`), 1, "from 1"},
		{"commit not above last", repl(`"runs":[[0,4]],"records":5`, `"runs":[[0,10]],"records":11`), 1, "commit 10"},
		{"timestamps", repl(`"min_ts":1`, `"min_ts":3`), 1, "min_ts"},
		{"duplicate entry", string(good) + string(good), 2, "already on line 1"},
		{"null", "null\n", 1, ""},
		{"huge number", repl(`"size":10`, `"size":1e99`), 1, ""},
	} {
		_, err := Decode(key, strings.NewReader(tc.data))
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: Decode = %v, want ErrMalformed", tc.name, err)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, key) || (tc.line > 0 && !strings.Contains(msg, fmt.Sprintf("line %d:", tc.line))) || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: Decode error %q, want the key, line %d and %q", tc.name, msg, tc.line, tc.want)
		}
	}
	if _, err := Decode("topics/orders/x.jsonl", bytes.NewReader(good)); !errors.Is(err, ErrMalformed) {
		t.Errorf("Decode with a non-index key = %v, want ErrMalformed", err)
	}
}

// v1Line is a v1 entry as kafkas3 wrote it before v2: SHA-256 only.
const v1Line = `{"v":1,"topic":"orders","partition":0,"key":"k",` +
	`"objects":[{"key":"k","part":"","size":10,"sha256":"` + sha + `"}],` +
	`"runs":[[0,4]],"records":5,"from":0,"commit":10,"min_ts":1,"max_ts":2,"envelope":false,"tombstone":false}`

// TestDecodeV1: entries written before v2 (SHA-256, no CRC32C) still
// decode, re-encode to the same bytes, and are checked by v1's rules.
func TestDecodeV1(t *testing.T) {
	key := Key("_kafkas3/", "orders", 0, 10, "")
	es, err := Decode(key, strings.NewReader(v1Line+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if es[0].V != Version1 || es[0].Objects[0].SHA256 != sha || es[0].Objects[0].CRC32C != "" {
		t.Fatalf("decoded %+v", es[0])
	}
	b, err := Encode(es)
	if err != nil || string(b) != v1Line+"\n" {
		t.Fatalf("Encode(Decode(v1)) = %q, %v; want the same bytes", b, err)
	}
	repl := func(old, new string) string { return strings.Replace(v1Line, old, new, 1) + "\n" }
	for _, tc := range []struct{ name, data, want string }{
		{"no sha", repl(`,"sha256":"`+sha+`"`, ``), "sha256"},
		{"bad sha", repl(sha, "E3"+sha[2:]), "sha256"},
		{"short sha", repl(sha, sha[:10]), "sha256"},
		{"crc32c in v1", repl(`"size":10,`, `"size":10,"crc32c":"`+crc+`",`), "crc32c"},
	} {
		_, err := Decode(key, strings.NewReader(tc.data))
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Decode = %v, want ErrMalformed naming %q", tc.name, err, tc.want)
		}
	}
}

// TestCRC32CText: FormatCRC32C prints what S3 prints, and ParseCRC32C
// reads exactly that back.
func TestCRC32CText(t *testing.T) {
	if got := FormatCRC32C(0xe3069283); got != crc {
		t.Fatalf("FormatCRC32C = %q, want %q", got, crc)
	}
	if v, err := ParseCRC32C(crc); err != nil || v != 0xe3069283 {
		t.Fatalf("ParseCRC32C = %x, %v", v, err)
	}
	for _, bad := range []string{"", "4waSgw", "4waSgx==", "4waSgw=", "AAAAAAA=", "====", " 4waSgw=="} {
		if _, err := ParseCRC32C(bad); err == nil {
			t.Errorf("ParseCRC32C(%q) accepted", bad)
		}
	}
}

func put(t *testing.T, st s3store.Store, key string, data []byte) {
	t.Helper()
	ctx := context.Background()
	w, err := st.Create(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

func encode(t *testing.T, es ...Entry) []byte {
	t.Helper()
	b, err := Encode(es)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestLoadSupersedes(t *testing.T) {
	st := s3store.NewMemory()
	const p = "_kafkas3/"
	a := entry("o+0", 0, 3, Run{0, 2})
	// A replay rewrote o+0 as a superset, with a higher commit.
	a2 := entry("o+0", 0, 5, Run{0, 4})
	b := entry("o+5", 5, 8, Run{5, 7})
	put(t, st, Key(p, "orders", 0, 3, ""), encode(t, a))
	put(t, st, Key(p, "orders", 0, 8, ""), encode(t, b))
	put(t, st, Key(p, "orders", 0, 5, ""), encode(t, a2))
	other := entry("x+0", 0, 1, Run{0, 0})
	other.Topic = "other"
	put(t, st, Key(p, "other", 0, 1, WriterOf("g")), encode(t, other))
	put(t, st, "topics/orders/partition=0/o+0", []byte("not index"))
	put(t, st, p+"snapshots/whatever", []byte("not index either"))

	ix, err := Load(context.Background(), st, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ix.IndexObjects != 4 || ix.Superseded != 1 {
		t.Fatalf("IndexObjects=%d Superseded=%d, want 4 and 1", ix.IndexObjects, ix.Superseded)
	}
	if want := []Entry{a2, b, other}; !reflect.DeepEqual(ix.Entries, want) {
		t.Fatalf("Entries = %+v\nwant %+v", ix.Entries, want)
	}
	if want := []Entry{a2, a, b, other}; !reflect.DeepEqual(ix.All, want) {
		t.Fatalf("All = %+v\nwant %+v", ix.All, want)
	}
	ix, err = Load(context.Background(), st, p, []string{"other"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ix.Entries, []Entry{other}) {
		t.Fatalf("topic filter: Entries = %+v", ix.Entries)
	}

	// A stray object in the index folder fails the load, naming it.
	put(t, st, p+"index/orders/0/junk.txt", []byte("x"))
	if _, err := Load(context.Background(), st, p, nil); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "junk.txt") {
		t.Fatalf("Load with a stray object = %v", err)
	}
}

type failStore struct{ s3store.Store }

func (failStore) Open(context.Context, string) (io.ReadCloser, error) {
	return nil, errors.New("boom")
}

func TestLoadStoreError(t *testing.T) {
	st := s3store.NewMemory()
	put(t, st, Key("_kafkas3/", "orders", 0, 3, ""), encode(t, entry("o+0", 0, 3, Run{0, 2})))
	_, err := Load(context.Background(), failStore{st}, "_kafkas3/", nil)
	if err == nil || !strings.Contains(err.Error(), "boom") || !strings.Contains(err.Error(), "00000000000000000003.jsonl") {
		t.Fatalf("Load = %v, want the store error naming the index object", err)
	}
}

func TestAnalyze(t *testing.T) {
	type want struct {
		from, commit, records, absent int64
		held, gaps                    []Run
		overlaps                      []Overlap
	}
	for _, tc := range []struct {
		name    string
		entries []Entry
		want    want
	}{
		{
			name:    "clean, consecutive",
			entries: []Entry{entry("b", 3, 6, Run{3, 5}), entry("a", 0, 3, Run{0, 2})},
			want:    want{from: 0, commit: 6, records: 6, held: []Run{{0, 5}}},
		},
		{
			name: "compaction and markers are absent, not gaps",
			entries: []Entry{
				entry("a", 0, 6, Run{0, 1}, Run{4, 4}),
				entry("b", 6, 12, Run{7, 9}),
			},
			want: want{from: 0, commit: 12, records: 6, absent: 6, held: []Run{{0, 1}, {4, 4}, {7, 9}}},
		},
		{
			name: "a field partitioner spreads one rotation over two objects",
			entries: []Entry{
				entry("x", 0, 6, Run{0, 0}, Run{2, 3}),
				entry("y", 0, 6, Run{1, 1}, Run{4, 5}),
			},
			want: want{from: 0, commit: 6, records: 6, held: []Run{{0, 5}}},
		},
		{
			name:    "gap between two rotations",
			entries: []Entry{entry("a", 0, 10, Run{0, 9}), entry("b", 20, 25, Run{20, 24})},
			want:    want{from: 0, commit: 25, records: 15, held: []Run{{0, 9}, {20, 24}}, gaps: []Run{{10, 19}}},
		},
		{
			name: "two runs with different flush.size",
			entries: []Entry{
				entry("o+0", 0, 5, Run{0, 4}), entry("o+5", 5, 9, Run{5, 8}), // run 2, flush.size 5
				entry("o+3", 3, 6, Run{3, 5}), entry("o+6", 6, 9, Run{6, 8}), // run 1, flush.size 3
			},
			want: want{from: 0, commit: 9, records: 9, held: []Run{{0, 8}}, overlaps: []Overlap{
				{Run{3, 4}, []string{"o+0", "o+3"}},
				{Run{5, 5}, []string{"o+3", "o+5"}},
				{Run{6, 8}, []string{"o+5", "o+6"}},
			}},
		},
		{
			name: "overlap across run holes joins only touching offsets",
			entries: []Entry{
				entry("a", 0, 10, Run{0, 2}, Run{5, 9}),
				entry("b", 1, 10, Run{1, 1}, Run{6, 7}),
			},
			want: want{from: 0, commit: 10, records: 8, absent: 2, held: []Run{{0, 2}, {5, 9}}, overlaps: []Overlap{
				{Run{1, 1}, []string{"a", "b"}},
				{Run{6, 7}, []string{"a", "b"}},
			}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := Analyze(tc.entries)
			if len(ps) != 1 {
				t.Fatalf("%d partitions, want 1", len(ps))
			}
			p := ps[0]
			got := want{p.From, p.Commit, p.Records, p.Absent, p.Held, p.Gaps, p.Overlaps}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
			if p.Clean() != (len(tc.want.gaps) == 0 && len(tc.want.overlaps) == 0) {
				t.Fatalf("Clean() = %v", p.Clean())
			}
		})
	}
}

func TestAnalyzeGroupsPartitions(t *testing.T) {
	a := entry("a", 0, 1, Run{0, 0})
	b := entry("b", 0, 1, Run{0, 0})
	b.Partition = 1
	c := entry("c", 0, 1, Run{0, 0})
	c.Topic = "alpha"
	ps := Analyze([]Entry{b, a, c})
	var got []string
	for _, p := range ps {
		got = append(got, fmt.Sprintf("%s/%d:%d", p.Topic, p.Partition, len(p.Entries)))
		if !p.Clean() {
			t.Errorf("%s/%d not clean: entries of other partitions must not overlap", p.Topic, p.Partition)
		}
	}
	if want := []string{"alpha/0:1", "orders/0:1", "orders/1:1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("partitions %v, want %v", got, want)
	}
}

func FuzzDecode(f *testing.F) {
	good, _ := Encode([]Entry{entry("k", 0, 10, Run{0, 4}, Run{6, 9})})
	f.Add(good)
	f.Add([]byte(v1Line + "\n"))
	sha2 := entry("k", 0, 10, Run{0, 4})
	sha2.Objects[0].SHA256 = sha
	if b, err := Encode([]Entry{sha2}); err == nil {
		f.Add(b)
	}
	f.Add([]byte("{}\n"))
	f.Add([]byte(`{"runs":[[1,2],[3]]}` + "\n"))
	key := Key("_kafkas3/", "orders", 0, 10, "")
	f.Fuzz(func(t *testing.T, data []byte) {
		es, err := Decode(key, bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		// What decodes re-encodes and decodes to the same entries.
		b, err := Encode(es)
		if err != nil {
			t.Fatalf("decoded entries do not encode: %v", err)
		}
		es2, err := Decode(key, bytes.NewReader(b))
		if err != nil || !reflect.DeepEqual(es, es2) {
			t.Fatalf("round trip: %v", err)
		}
		for _, p := range Analyze(es) {
			_ = p.Clean()
		}
	})
}

// TestWriterOf: a group's token is stable, 12 hex digits, and differs
// between groups, so two sinks never share an index key.
func TestWriterOf(t *testing.T) {
	a, b := WriterOf("connect-a"), WriterOf("connect-b")
	if !isWriter(a) || !isWriter(b) || a == b || a != WriterOf("connect-a") {
		t.Fatalf("WriterOf: %q %q", a, b)
	}
	// Pinned: the first 12 hex digits of sha256("connect-a"), as Python's
	// hashlib gives them.
	if a != "e1a3994a3562" {
		t.Fatalf("WriterOf(connect-a) = %q, want e1a3994a3562", a)
	}
}

func TestSubtract(t *testing.T) {
	got := Subtract([]Run{{0, 9}, {20, 29}}, []Run{{2, 3}, {9, 21}, {25, 25}})
	want := []Run{{0, 1}, {4, 8}, {22, 24}, {26, 29}}
	if !slices.Equal(got, want) {
		t.Fatalf("Subtract = %v, want %v", got, want)
	}
	if got := Subtract([]Run{{5, 6}}, nil); !slices.Equal(got, []Run{{5, 6}}) {
		t.Fatalf("Subtract nothing = %v", got)
	}
	if got := Subtract([]Run{{5, 6}}, []Run{{0, 100}}); got != nil {
		t.Fatalf("Subtract all = %v", got)
	}
}

func TestAnalyzeLost(t *testing.T) {
	a := Entry{V: Version, Topic: "t", Partition: 0, Key: "a", Objects: []Object{{Key: "a", Size: 1, CRC32C: crc}},
		Runs: []Run{{0, 19}}, Records: 20, From: 0, Commit: 20}
	b := Entry{V: Version, Topic: "t", Partition: 0, Key: "b", Objects: []Object{{Key: "b", Size: 1, CRC32C: crc}},
		Runs: []Run{{60, 69}}, Records: 10, From: 20, Commit: 70, Lost: []Run{{20, 59}}, TopicID: FormatTopicID([16]byte{1, 2})}
	for _, e := range []Entry{a, b} {
		if err := e.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	ps := Analyze([]Entry{a, b})
	if len(ps) != 1 || ps[0].LostCount != 40 || ps[0].Absent != 0 || !slices.Equal(ps[0].Lost, []Run{{20, 59}}) || len(ps[0].Gaps) != 0 {
		t.Fatalf("Analyze = %+v", ps)
	}
	bad := b
	bad.Lost = []Run{{20, 60}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "overlaps the held run") {
		t.Fatalf("lost over a held run: %v", err)
	}
	bad.Lost = []Run{{10, 19}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "lost[0]") {
		t.Fatalf("lost below from: %v", err)
	}
	bad = b
	bad.TopicID = "nope"
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "topic_id") {
		t.Fatalf("bad topic id: %v", err)
	}
	data, err := Encode([]Entry{b})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"topic_id":"AQIAAAAAAAAAAAAAAAAAAA","lost":[[20,59]]}`) {
		t.Fatalf("encoded: %s", data)
	}
}

func TestTopicIDRoundTrip(t *testing.T) {
	id := [16]byte{0xfb, 0xff, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	s := FormatTopicID(id)
	if len(s) != 22 {
		t.Fatalf("FormatTopicID = %q", s)
	}
	back, err := ParseTopicID(s)
	if err != nil || back != id {
		t.Fatalf("ParseTopicID(%q) = %v, %v", s, back, err)
	}
	if FormatTopicID([16]byte{}) != "" {
		t.Fatal("zero id not empty")
	}
	if _, err := ParseTopicID(FormatTopicID([16]byte{1})[:21]); err == nil {
		t.Fatal("short id accepted")
	}
}

func TestGenerationRoots(t *testing.T) {
	cases := []struct {
		dir  string
		n    int
		want string
	}{{"topics", 1, "topics"}, {"topics", 2, "topics/generation=2"}, {"", 3, "generation=3"}, {"a/b/", 2, "a/b/generation=2"}}
	for _, c := range cases {
		if got := GenerationTopicsDir(c.dir, c.n); got != c.want {
			t.Errorf("GenerationTopicsDir(%q, %d) = %q, want %q", c.dir, c.n, got, c.want)
		}
	}
	if got := GenerationPrefix("_kafkas3/", 2); got != "_kafkas3/generation=2/" {
		t.Errorf("GenerationPrefix = %q", got)
	}
	if got := GenerationPrefix("_kafkas3/", 1); got != "_kafkas3/" {
		t.Errorf("GenerationPrefix(1) = %q", got)
	}
}

// TestDecodeShares: a decoded index object holds one copy of the strings
// its entries have in common (the topic), each value object's key is its
// entry's, and part names are the package's constants.
func TestDecodeShares(t *testing.T) {
	b := encode(t, entry("topics/orders/partition=0/orders+0+0.json", 0, 20, Run{First: 0, Last: 9}),
		entry("topics/orders/partition=0/orders+0+10.json", 0, 20, Run{First: 10, Last: 19}))
	es, err := Decode(Key("p/", "orders", 0, 20, ""), bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	same := func(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }
	if !same(es[0].Topic, es[1].Topic) {
		t.Error("the entries' topics are two copies")
	}
	for _, e := range es {
		if !same(e.Objects[0].Key, e.Key) || !same(e.Objects[0].Part, PartValue) {
			t.Errorf("%q: its value object's key or part is a copy of its own", e.Key)
		}
	}
}
