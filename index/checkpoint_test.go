package index

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// checkpointBytes writes a checkpoint of orders/0 at commit 10 of writer
// w holding es.
func checkpointBytes(t testing.TB, w string, dropped int, es ...Entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	cw, err := NewCheckpointWriter(&buf, CheckpointHeader{Topic: "orders", Partition: 0, Writer: w, Commit: 10, LogObjects: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i := range es {
		if err := cw.Add(&es[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := cw.Close(dropped); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gz(s string) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write([]byte(s))
	w.Close()
	return buf.Bytes()
}

func TestCheckpointRoundTrip(t *testing.T) {
	w := WriterOf("g")
	key := CheckpointKey("_kafkas3/", "orders", 0, 10, w)
	if key != "_kafkas3/checkpoints/orders/0/00000000000000000010-"+w+".jsonl.gz" {
		t.Fatalf("CheckpointKey = %s", key)
	}
	if kn, err := ParseCheckpointKey(key); err != nil || kn != (KeyName{Prefix: "_kafkas3/", Topic: "orders", Commit: 10, Writer: w}) {
		t.Fatalf("ParseCheckpointKey = %+v, %v", kn, err)
	}
	a, a0, b := entry("o+0", 0, 5, Run{0, 4}), entry("o+0", 0, 3, Run{0, 2}), entry("o+5", 5, 10, Run{5, 9})
	data := checkpointBytes(t, w, 2, a, a0, b)
	if !bytes.Equal(data, checkpointBytes(t, w, 2, a, a0, b)) {
		t.Fatal("the same checkpoint gave other bytes")
	}
	var got []Entry
	h, dropped, err := ReadCheckpoint(key, bytes.NewReader(data), nil, func(e *Entry) error { got = append(got, *e); return nil })
	if err != nil || dropped != 2 || h.LogObjects != 3 || len(got) != 3 || got[1].Commit != 3 {
		t.Fatalf("ReadCheckpoint = %+v, %d, %v, %d entries", h, dropped, err, len(got))
	}
	// Out of order, and past the header's commit: refused.
	var buf bytes.Buffer
	cw, _ := NewCheckpointWriter(&buf, CheckpointHeader{Topic: "orders", Writer: w, Commit: 10})
	if err := cw.Add(&b); err != nil {
		t.Fatal(err)
	}
	if err := cw.Add(&a); !errors.Is(err, ErrMalformed) {
		t.Fatalf("Add out of order = %v", err)
	}
	late := entry("o+20", 20, 30, Run{20, 29})
	if err := cw.Add(&late); !errors.Is(err, ErrMalformed) {
		t.Fatalf("Add past the commit = %v", err)
	}
}

func TestReadCheckpointRejects(t *testing.T) {
	w := WriterOf("g")
	key := CheckpointKey("_kafkas3/", "orders", 0, 10, w)
	good := checkpointBytes(t, w, 0, entry("o+0", 0, 5, Run{0, 4}))
	hdr := `{"checkpoint":1,"topic":"orders","partition":0,"writer":"` + w + `","commit":10,"log_objects":1}` + "\n"
	line := `{"v":1,"topic":"orders","partition":0,"key":"o+0","objects":[{"key":"o+0","part":"","size":10,"sha256":"` + sha + `"}],"runs":[[0,4]],"records":5,"from":0,"commit":5,"min_ts":1,"max_ts":2,"envelope":false,"tombstone":false}` + "\n"
	cases := []struct {
		name string
		key  string
		data []byte
		want string
	}{
		{"not gzip", key, []byte("plain"), "not gzip"},
		{"truncated", key, good[:len(good)-10], ""},
		{"no trailer", key, gz(hdr + line), "without its trailer"},
		{"wrong count", key, gz(hdr + line + `{"entries":2,"dropped":0}` + "\n"), "counts 2 entries"},
		{"data after", key, gz(hdr + line + `{"entries":1,"dropped":0}` + "\nx"), "after the trailer"},
		{"other commit", CheckpointKey("_kafkas3/", "orders", 0, 11, w), good, "commit 10"},
		{"other writer", CheckpointKey("_kafkas3/", "orders", 0, 10, WriterOf("h")), good, "writer"},
		{"version", key, gz(strings.Replace(hdr, `"checkpoint":1`, `"checkpoint":2`, 1) + `{"entries":0,"dropped":0}` + "\n"), "checkpoint is 2"},
		{"unknown field", key, gz(hdr + strings.Replace(line, `"records"`, `"extra":1,"records"`, 1) + `{"entries":1,"dropped":0}` + "\n"), "unknown field"},
		{"bad entry", key, gz(hdr + strings.Replace(line, `"records":5`, `"records":4`, 1) + `{"entries":1,"dropped":0}` + "\n"), "records is 4"},
		{"no newline", key, gz(hdr + line + `{"entries":1,"dropped":0}`), "newline"},
		{"not a checkpoint key", "_kafkas3/index/orders/0/00000000000000000010.jsonl", good, "not a checkpoint key"},
	}
	for _, tc := range cases {
		_, _, err := ReadCheckpoint(tc.key, bytes.NewReader(tc.data), nil, func(*Entry) error { return nil })
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.key) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: ReadCheckpoint = %v, want ErrMalformed naming the key and %q", tc.name, err, tc.want)
		}
	}
}

func FuzzReadCheckpoint(f *testing.F) {
	w := WriterOf("g")
	key := CheckpointKey("_kafkas3/", "orders", 0, 10, w)
	f.Add(checkpointBytes(f, w, 1, entry("o+0", 0, 5, Run{0, 4}), entry("o+5", 5, 10, Run{5, 9})))
	f.Add(gz("{}\n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		n := 0
		_, _, err := ReadCheckpoint(key, bytes.NewReader(data), nil, func(e *Entry) error {
			if err := e.Validate(); err != nil {
				t.Fatalf("ReadCheckpoint gave an invalid entry: %v", err)
			}
			n++
			return nil
		})
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("ReadCheckpoint error %v does not wrap ErrMalformed", err)
		}
	})
}
