package index

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/kafkas3/kafkas3/s3store"
)

// Snapshot is what the sink recorded of one archived topic at one moment:
// the end offset of each partition and the committed offset of each
// consumer group on it, taken together (the group offsets first, then the
// end offsets, so a group never looks ahead of the data it could have
// read). It is stored at SnapshotKey as one JSON object (EncodeSnapshot).
type Snapshot struct {
	// Topic is the archived (source) topic.
	Topic string
	// TimeMS is the wall time of the snapshot in Unix milliseconds.
	TimeMS int64
	// EndOffsets holds, per partition, the offset the next record would
	// get (the high watermark, or the last stable offset under
	// read_committed). Every partition of the topic is there.
	EndOffsets map[int32]int64
	// Groups holds, per consumer group, its committed offset (the next
	// offset it reads) per partition. Partitions where the group has no
	// committed offset are absent; a group with none at all is absent.
	Groups map[string]map[int32]int64
}

// snapshotDir is the folder under the prefix that holds the snapshots.
const snapshotDir = "snapshots/"

// SnapshotVersion is the value of a snapshot's "v" field.
const SnapshotVersion = 1

// snapshotExt ends every snapshot key.
const snapshotExt = ".json"

// SnapshotDir returns "<prefix>snapshots/".
func SnapshotDir(prefix string) string { return prefix + snapshotDir }

// SnapshotTopicDir returns "<prefix>snapshots/<topic>/".
func SnapshotTopicDir(prefix, topic string) string { return prefix + snapshotDir + topic + "/" }

// SnapshotKey returns the key of the snapshot of topic taken at timeMS by
// writer (WriterOf of the sink's group):
// "<prefix>snapshots/<topic>/<time ms, 20 digits>-<writer>.json". An
// empty writer gives "<time ms, 20 digits>.json", which readers accept
// too (the sink always names its writer).
func SnapshotKey(prefix, topic string, timeMS int64, writer string) string {
	return SnapshotTopicDir(prefix, topic) + stamp(timeMS, writer) + snapshotExt
}

// SnapshotName is what a snapshot key names.
type SnapshotName struct {
	Key    string
	Prefix string
	Topic  string
	TimeMS int64
	Writer string // "" when the key names none
}

// ParseSnapshotKey takes a snapshot key apart; the prefix is everything
// before the last "snapshots/<topic>/" folder. It is the inverse of
// SnapshotKey. Its error wraps ErrMalformed and quotes the key.
func ParseSnapshotKey(key string) (SnapshotName, error) {
	bad := func(why string) (SnapshotName, error) {
		return SnapshotName{}, fmt.Errorf("%w: %q is not a snapshot key (<prefix>snapshots/<topic>/<time ms, 20 digits>-<writer>.json): %s",
			ErrMalformed, key, why)
	}
	prefix, topic, t, writer, why := parseTopicStamp(key, snapshotDir, snapshotExt)
	if why != "" {
		return bad(why)
	}
	return SnapshotName{Key: key, Prefix: prefix, Topic: topic, TimeMS: t, Writer: writer}, nil
}

// Validate checks the rules EncodeSnapshot and DecodeSnapshot enforce: a
// valid topic, a time of at least 0, at least one partition, partitions
// and offsets of at least 0, non-empty group names in UTF-8 whose
// partitions are partitions of EndOffsets.
func (s *Snapshot) Validate() error {
	if err := validTopic(s.Topic); err != nil {
		return fmt.Errorf("topic: %w", err)
	}
	if s.TimeMS < 0 {
		return fmt.Errorf("time_ms %d is negative", s.TimeMS)
	}
	if len(s.EndOffsets) == 0 {
		return errors.New("end_offsets names no partition")
	}
	for p, o := range s.EndOffsets {
		if p < 0 {
			return fmt.Errorf("end_offsets: partition %d is negative", p)
		}
		if o < 0 {
			return fmt.Errorf("end_offsets: partition %d: offset %d is negative", p, o)
		}
	}
	for g, offs := range s.Groups {
		if g == "" {
			return errors.New("groups: a group name is empty")
		}
		if !utf8.ValidString(g) {
			return fmt.Errorf("groups: group %q is not UTF-8", g)
		}
		if len(offs) == 0 {
			return fmt.Errorf("groups: group %q has no partition", g)
		}
		for p, o := range offs {
			if _, ok := s.EndOffsets[p]; !ok {
				return fmt.Errorf("groups: group %q: partition %d is not in end_offsets", g, p)
			}
			if o < 0 {
				return fmt.Errorf("groups: group %q partition %d: offset %d is negative", g, p, o)
			}
		}
	}
	return nil
}

// GroupNames returns the snapshot's group names, sorted.
func (s *Snapshot) GroupNames() []string {
	out := make([]string, 0, len(s.Groups))
	for g := range s.Groups {
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}

// Partitions returns the partitions of EndOffsets, in increasing order.
func (s *Snapshot) Partitions() []int32 { return sortedPartitions(s.EndOffsets) }

func sortedPartitions(m map[int32]int64) []int32 {
	out := make([]int32, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// EncodeSnapshot returns the bytes of a snapshot object: one JSON object on
// one line ending in "\n", fields in the order
// {"v":1,"topic":..,"time_ms":..,"end_offsets":{"<p>":N,...},"groups":{"<group>":{"<p>":N,...},...}},
// partitions in increasing numeric order, groups sorted by name. The
// same snapshot always gives the same bytes. s must be valid (Validate).
func EncodeSnapshot(s *Snapshot) ([]byte, error) {
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("%w: snapshot of topic %q: %w", ErrMalformed, s.Topic, err)
	}
	b := make([]byte, 0, 128)
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, SnapshotVersion, 10)
	b = append(b, `,"topic":`...)
	b = appendJSONString(b, s.Topic)
	b = append(b, `,"time_ms":`...)
	b = strconv.AppendInt(b, s.TimeMS, 10)
	b = append(b, `,"end_offsets":`...)
	b = appendOffsets(b, s.EndOffsets)
	b = append(b, `,"groups":{`...)
	for i, g := range s.GroupNames() {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, g)
		b = append(b, ':')
		b = appendOffsets(b, s.Groups[g])
	}
	b = append(b, "}}\n"...)
	return b, nil
}

func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}

func appendOffsets(b []byte, m map[int32]int64) []byte {
	b = append(b, '{')
	for i, p := range sortedPartitions(m) {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = strconv.AppendInt(b, int64(p), 10)
		b = append(b, `":`...)
		b = strconv.AppendInt(b, m[p], 10)
	}
	return append(b, '}')
}

// MaxSnapshotSize bounds the bytes DecodeSnapshot reads from one object.
const MaxSnapshotSize = 64 << 20

// DecodeSnapshot reads the snapshot object stored at key (a snapshot key,
// see ParseSnapshotKey). It takes one JSON object with exactly the fields
// v (SnapshotVersion), topic, time_ms, end_offsets and groups, each once, no
// other field, no repeated partition or group, integer offsets, topic and
// time_ms equal to the key's, and the rules of Snapshot.Validate;
// whitespace is free. The error wraps ErrMalformed and names the key and
// the line. DecodeSnapshot never panics.
func DecodeSnapshot(key string, r io.Reader) (*Snapshot, error) {
	name, err := ParseSnapshotKey(key)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxSnapshotSize+1))
	if err != nil {
		return nil, fmt.Errorf("snapshot %q: %w", key, err)
	}
	if len(data) > MaxSnapshotSize {
		return nil, fmt.Errorf("%w: snapshot %q is larger than %d bytes", ErrMalformed, key, MaxSnapshotSize)
	}
	d := &snapDecoder{key: key, data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	d.dec.UseNumber()
	s, err := d.snapshot()
	if err != nil {
		return nil, err
	}
	if s.Topic != name.Topic {
		return nil, d.errAt(0, "topic %q in the snapshot of topic %q", s.Topic, name.Topic)
	}
	if s.TimeMS != name.TimeMS {
		return nil, d.errAt(0, "time_ms %d in the snapshot of time %d", s.TimeMS, name.TimeMS)
	}
	if err := s.Validate(); err != nil {
		return nil, d.errAt(0, "%v", err)
	}
	return s, nil
}

// snapDecoder walks the tokens of one snapshot object.
type snapDecoder struct {
	key  string
	data []byte
	dec  *json.Decoder
}

// errAt names the key and the line of byte offset off (0: line 1).
func (d *snapDecoder) errAt(off int64, format string, args ...any) error {
	off = min(max(off, 0), int64(len(d.data)))
	line := 1 + bytes.Count(d.data[:off], []byte{'\n'})
	return fmt.Errorf("%w: snapshot %q line %d: %s", ErrMalformed, d.key, line, fmt.Sprintf(format, args...))
}

// errHere names the line the decoder is on.
func (d *snapDecoder) errHere(format string, args ...any) error {
	return d.errAt(d.dec.InputOffset(), format, args...)
}

func (d *snapDecoder) token() (json.Token, error) {
	off := d.dec.InputOffset()
	t, err := d.dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, d.errAt(off, "ends early")
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, d.errAt(se.Offset, "%v", err)
		}
		return nil, d.errAt(off, "%v", err)
	}
	return t, nil
}

func (d *snapDecoder) delim(what string, want json.Delim) error {
	t, err := d.token()
	if err != nil {
		return err
	}
	if got, ok := t.(json.Delim); !ok || got != want {
		return d.errHere("%s: want %q, got %v", what, string(want), t)
	}
	return nil
}

// objectKeys calls fn for each key of the object that starts at the next
// token, refusing a repeated key; fn reads the value.
func (d *snapDecoder) objectKeys(what string, fn func(k string) error) error {
	if err := d.delim(what, '{'); err != nil {
		return err
	}
	seen := map[string]bool{}
	for d.dec.More() {
		t, err := d.token()
		if err != nil {
			return err
		}
		k, ok := t.(string)
		if !ok {
			return d.errHere("%s: want a field name, got %v", what, t)
		}
		if seen[k] {
			return d.errHere("%s: %q appears twice", what, k)
		}
		seen[k] = true
		if err := fn(k); err != nil {
			return err
		}
	}
	return d.delim(what, '}')
}

func (d *snapDecoder) integer(what string) (int64, error) {
	t, err := d.token()
	if err != nil {
		return 0, err
	}
	n, ok := t.(json.Number)
	if !ok {
		return 0, d.errHere("%s: want an integer, got %v", what, t)
	}
	v, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		return 0, d.errHere("%s: %s is not an integer", what, n)
	}
	return v, nil
}

func (d *snapDecoder) str(what string) (string, error) {
	t, err := d.token()
	if err != nil {
		return "", err
	}
	s, ok := t.(string)
	if !ok {
		return "", d.errHere("%s: want a string, got %v", what, t)
	}
	return s, nil
}

func (d *snapDecoder) offsets(what string) (map[int32]int64, error) {
	m := map[int32]int64{}
	err := d.objectKeys(what, func(k string) error {
		p, err := strconv.ParseInt(k, 10, 32)
		if err != nil || p < 0 || strconv.FormatInt(p, 10) != k {
			return d.errHere("%s: partition %q is not a canonical number", what, k)
		}
		o, err := d.integer(fmt.Sprintf("%s partition %d", what, p))
		if err != nil {
			return err
		}
		m[int32(p)] = o
		return nil
	})
	return m, err
}

func (d *snapDecoder) snapshot() (*Snapshot, error) {
	s := &Snapshot{}
	var hasV, hasTopic, hasTime, hasEnd, hasGroups bool
	err := d.objectKeys("snapshot", func(k string) error {
		var err error
		switch k {
		case "v":
			hasV = true
			var v int64
			if v, err = d.integer("v"); err == nil && v != SnapshotVersion {
				err = d.errHere("version %d, this reader knows %d", v, SnapshotVersion)
			}
		case "topic":
			hasTopic = true
			s.Topic, err = d.str("topic")
		case "time_ms":
			hasTime = true
			s.TimeMS, err = d.integer("time_ms")
		case "end_offsets":
			hasEnd = true
			s.EndOffsets, err = d.offsets("end_offsets")
		case "groups":
			hasGroups = true
			s.Groups = map[string]map[int32]int64{}
			err = d.objectKeys("groups", func(g string) error {
				offs, err := d.offsets(fmt.Sprintf("group %q", g))
				s.Groups[g] = offs
				return err
			})
		default:
			err = d.errHere("unknown field %q", k)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name string
		ok   bool
	}{{"v", hasV}, {"topic", hasTopic}, {"time_ms", hasTime}, {"end_offsets", hasEnd}, {"groups", hasGroups}} {
		if !f.ok {
			return nil, d.errHere("field %q is missing", f.name)
		}
	}
	if _, err := d.dec.Token(); !errors.Is(err, io.EOF) {
		return nil, d.errHere("data after the snapshot object")
	}
	return s, nil
}

// ListSnapshots lists "<prefix>snapshots/<topic>/" and returns the
// snapshots' names, newest first (by time, then writer, then key,
// descending), without opening them. An object there that is not a
// snapshot key of topic fails the listing (the error names it).
func ListSnapshots(ctx context.Context, st Store, prefix, topic string) ([]SnapshotName, error) {
	dir := SnapshotTopicDir(prefix, topic)
	var out []SnapshotName
	err := st.List(ctx, dir, func(info s3store.ObjectInfo) error {
		n, err := ParseSnapshotKey(info.Key)
		if err != nil {
			return err
		}
		if n.Topic != topic || n.Prefix != prefix {
			return fmt.Errorf("%w: %q under %q is not a snapshot of topic %q", ErrMalformed, info.Key, dir, topic)
		}
		out = append(out, n)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list the snapshots under %q: %w", dir, err)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.TimeMS != b.TimeMS {
			return a.TimeMS > b.TimeMS
		}
		if a.Writer != b.Writer {
			return a.Writer > b.Writer
		}
		return a.Key > b.Key
	})
	return out, nil
}

// ReadSnapshot opens and decodes the snapshot stored at key.
func ReadSnapshot(ctx context.Context, st Store, key string) (*Snapshot, error) {
	rc, err := st.Open(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("open snapshot %q: %w", key, err)
	}
	defer rc.Close()
	return DecodeSnapshot(key, rc)
}

// LoadSnapshot returns the newest snapshot of topic taken at or before
// atMS (Unix milliseconds; atMS < 0 means no bound: the newest of all),
// and its key; nil and "" when there is none. Only the chosen object is
// read.
func LoadSnapshot(ctx context.Context, st Store, prefix, topic string, atMS int64) (*Snapshot, string, error) {
	names, err := ListSnapshots(ctx, st, prefix, topic)
	if err != nil {
		return nil, "", err
	}
	for _, n := range names {
		if atMS >= 0 && n.TimeMS > atMS {
			continue
		}
		s, err := ReadSnapshot(ctx, st, n.Key)
		if err != nil {
			return nil, "", err
		}
		return s, n.Key, nil
	}
	return nil, "", nil
}
