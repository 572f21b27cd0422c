package index

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/kafkas3/kafkas3/partition"
)

func validTopic(t string) error { return partition.ValidateTopic(t) }

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// SortEntries puts entries in the order Encode writes them: by first
// offset, then key.
func SortEntries(entries []Entry) {
	sort.SliceStable(entries, func(i, j int) bool {
		a, b := &entries[i], &entries[j]
		if a.First() != b.First() {
			return a.First() < b.First()
		}
		return a.Key < b.Key
	})
}

// Encode returns the bytes of one index object: one JSON line per entry,
// sorted by first offset then key, each ending in "\n". The same entries
// always give the same bytes. Every entry must be valid (Entry.Validate)
// and have a distinct key; entries is not modified.
func Encode(entries []Entry) ([]byte, error) {
	if len(entries) == 0 {
		return nil, fmt.Errorf("%w: an index object needs at least one entry", ErrMalformed)
	}
	sorted := make([]Entry, len(entries))
	copy(sorted, entries)
	for i := range sorted {
		if err := sorted[i].Validate(); err != nil {
			return nil, fmt.Errorf("%w: entry %q: %w", ErrMalformed, sorted[i].Key, err)
		}
	}
	SortEntries(sorted)
	var buf bytes.Buffer
	for i := range sorted {
		if i > 0 && sorted[i].Key == sorted[i-1].Key {
			return nil, fmt.Errorf("%w: entry %q appears twice", ErrMalformed, sorted[i].Key)
		}
		b, err := json.Marshal(&sorted[i])
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", sorted[i].Key, err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}

// MaxObjectSize bounds the bytes Decode reads from one index object.
const MaxObjectSize = 64 << 20

// Decode reads one index object stored at key (an index object key, see
// ParseKey). Every line must be a valid entry (Entry.Validate) of the
// key's topic, partition and commit, with no unknown field and a distinct
// entry key, and end in "\n"; an empty object is malformed. The error
// wraps ErrMalformed and names the key and the line. Decode never panics.
func Decode(key string, r io.Reader) ([]Entry, error) {
	ik, err := ParseKey(key)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxObjectSize+1))
	if err != nil {
		return nil, fmt.Errorf("index object %q: %w", key, err)
	}
	if len(data) > MaxObjectSize {
		return nil, fmt.Errorf("%w: index object %q is larger than %d bytes", ErrMalformed, key, MaxObjectSize)
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("%w: index object %q is empty", ErrMalformed, key)
	}
	bad := func(line int, format string, args ...any) error {
		return fmt.Errorf("%w: index object %q line %d: %s", ErrMalformed, key, line, fmt.Sprintf(format, args...))
	}
	var out []Entry
	seen := map[string]int{}
	for line := 1; len(data) > 0; line++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return nil, bad(line, "does not end in a newline")
		}
		text := data[:i]
		data = data[i+1:]
		if len(bytes.TrimSpace(text)) == 0 {
			return nil, bad(line, "is empty")
		}
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		var e Entry
		if err := dec.Decode(&e); err != nil {
			return nil, bad(line, "%v", err)
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return nil, bad(line, "has data after the entry")
		}
		if err := e.Validate(); err != nil {
			return nil, bad(line, "%v", err)
		}
		if e.Topic != ik.Topic || e.Partition != ik.Partition || e.Commit != ik.Commit {
			return nil, bad(line, "entry of topic %q partition %d commit %d in the index object of topic %q partition %d commit %d",
				e.Topic, e.Partition, e.Commit, ik.Topic, ik.Partition, ik.Commit)
		}
		if prev, dup := seen[e.Key]; dup {
			return nil, bad(line, "entry %q already on line %d", e.Key, prev)
		}
		seen[e.Key] = line
		if len(out) > 0 {
			e.share(&out[len(out)-1])
		} else {
			e.share(nil)
		}
		out = append(out, e)
	}
	return out, nil
}
