package index

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Entry versions, the values of an entry's "v" field. A reader refuses
// other versions rather than guess what a newer writer meant.
const (
	// Version1 entries give each object's SHA-256 ("sha256", required).
	Version1 = 1
	// Version2 entries give each object's full-object CRC32C ("crc32c",
	// required), the checksum the store verified on receipt, and its
	// SHA-256 only when the sink computed one (kafkas3.index.digest).
	Version2 = 2
	// Version is what the sink writes.
	Version = Version2
)

// Object parts: the value object, and the parallel objects that Confluent's
// store.kafka.keys and store.kafka.headers write next to it.
const (
	PartValue   = ""
	PartKeys    = "keys"
	PartHeaders = "headers"
)

// ErrMalformed is wrapped by every error about an index object's content or
// key.
var ErrMalformed = errors.New("malformed archive index")

// Run is an inclusive range of Kafka offsets, [First, Last]. In JSON it is
// the array [first,last].
type Run struct {
	First, Last int64
}

// Len returns the number of offsets in r.
func (r Run) Len() int64 { return r.Last - r.First + 1 }

// String prints r as "first-last", or "first" for a single offset.
func (r Run) String() string {
	if r.First == r.Last {
		return strconv.FormatInt(r.First, 10)
	}
	return strconv.FormatInt(r.First, 10) + "-" + strconv.FormatInt(r.Last, 10)
}

// MarshalJSON writes [first,last].
func (r Run) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 24)
	b = append(b, '[')
	b = strconv.AppendInt(b, r.First, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, r.Last, 10)
	return append(b, ']'), nil
}

// UnmarshalJSON reads [first,last].
func (r *Run) UnmarshalJSON(b []byte) error {
	var a []int64
	if err := jsonUnmarshal(b, &a); err != nil {
		return err
	}
	if len(a) != 2 {
		return fmt.Errorf("a run is [first,last], got %d numbers", len(a))
	}
	r.First, r.Last = a[0], a[1]
	return nil
}

// Object is one stored object of an entry: its key, which part of the
// entry it holds, its size in bytes and the checksums of its bytes.
type Object struct {
	Key  string `json:"key"`
	Part string `json:"part"`
	Size int64  `json:"size"`
	// CRC32C is the CRC32C (Castagnoli) of the whole object as S3 prints
	// it (FormatCRC32C): required in v2 entries, absent in v1 ones.
	CRC32C string `json:"crc32c,omitempty"`
	// SHA256 is the SHA-256 of the object, lower case hex: required in v1
	// entries, optional in v2 ones (kafkas3.index.digest=sha256).
	SHA256 string `json:"sha256,omitempty"`
	// ETag is the ETag the store answered when the sink committed the
	// object (s3store.ETagger), quotes stripped: optional (v1 and older
	// v2 entries lack it, a local directory gives none). Plain verify
	// takes an object listed with the entry's size and ETag as the one
	// the sink wrote, without a HEAD.
	ETag string `json:"etag,omitempty"`
}

// FormatCRC32C prints a CRC32C as S3 does (x-amz-checksum-crc32c): the
// standard base64 of its 4 big-endian bytes.
func FormatCRC32C(crc uint32) string {
	return base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, crc))
}

// ParseCRC32C reads a CRC32C printed by FormatCRC32C, refusing any other
// spelling of it.
func ParseCRC32C(s string) (uint32, error) {
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil || len(b) != 4 || FormatCRC32C(binary.BigEndian.Uint32(b)) != s {
		return 0, fmt.Errorf("%q is not the base64 of 4 bytes", s)
	}
	return binary.BigEndian.Uint32(b), nil
}

// Entry describes one committed value object (or tombstone object) with
// its parallel objects. Field order is the JSON line's order.
type Entry struct {
	V         int      `json:"v"`
	Topic     string   `json:"topic"`
	Partition int32    `json:"partition"`
	Key       string   `json:"key"`
	Objects   []Object `json:"objects"`
	Runs      []Run    `json:"runs"`
	Records   int64    `json:"records"`
	From      int64    `json:"from"`
	Commit    int64    `json:"commit"`
	MinTS     int64    `json:"min_ts"`
	MaxTS     int64    `json:"max_ts"`
	Envelope  bool     `json:"envelope"`
	Tombstone bool     `json:"tombstone"`
	// TopicID is the topic's Kafka id (FormatTopicID) when the sink knew
	// it; omitted in entries written before ids were recorded.
	TopicID string `json:"topic_id,omitempty"`
	// Lost are offsets in [From, Commit-1] the sink found deleted before
	// it could read them (below the partition's log start: retention or
	// DeleteRecords passed the sink), as runs; omitted when none.
	Lost []Run `json:"lost,omitempty"`
	// MaxRecordBytes is the size of the entry's largest record as a
	// restore produces it, measured as RecordSize does (what the objects
	// keep of it: the key only with a .keys object or an envelope, the
	// headers only with a .headers object or an envelope, a typed value
	// as its Avro bytes plus the 5-byte wire-format frame); omitted in
	// entries written before sizes were recorded (then 0: unknown). A
	// restore checks it against the target's max.message.bytes before
	// producing anything.
	MaxRecordBytes int64 `json:"max_record_bytes,omitempty"`
	// NullKeys counts the records a restore produces without a key (a
	// compacted target refuses them); omitted when none. It is known only
	// when MaxRecordBytes is set: an entry without MaxRecordBytes says
	// nothing about keys (RecordsKnown).
	NullKeys int64 `json:"null_keys,omitempty"`
}

// RecordsKnown reports whether the entry records its largest record's
// size and its records without a key (MaxRecordBytes, NullKeys): entries
// written before they were recorded do not.
func (e *Entry) RecordsKnown() bool { return e.MaxRecordBytes > 0 }

// Fixed parts of RecordSize: a batch header of a batch of one record (61
// bytes), the record's own fixed fields and length varints (at most 21 +
// 2×5 + 5 bytes), and each header's two length varints (2×5).
const (
	recordOverhead = 61 + 21 + 2*5 + 5
	headerOverhead = 2 * 5
)

// RecordSize is the size a record adds to a produce batch as Kafka
// measures it against max.message.bytes, counted generously: key and
// value bytes, headerBytes (the keys and values of its headers
// together), headers × the two length varints of a header, and the fixed
// overhead of a batch holding only this record.
func RecordSize(keyBytes, valueBytes, headerBytes int64, headers int) int64 {
	return recordOverhead + keyBytes + valueBytes + headerBytes + int64(headers)*headerOverhead
}

// First returns the entry's first offset.
func (e *Entry) First() int64 { return e.Runs[0].First }

// Last returns the entry's last offset.
func (e *Entry) Last() int64 { return e.Runs[len(e.Runs)-1].Last }

// Offset returns the Kafka offset of record i of the entry's objects (the
// i-th offset of the runs), or -1 when i is out of range.
func (e *Entry) Offset(i int64) int64 {
	if i < 0 {
		return -1
	}
	for _, r := range e.Runs {
		if i < r.Len() {
			return r.First + i
		}
		i -= r.Len()
	}
	return -1
}

// Part returns the entry's object of the given part, or nil.
func (e *Entry) Part(part string) *Object {
	for i := range e.Objects {
		if e.Objects[i].Part == part {
			return &e.Objects[i]
		}
	}
	return nil
}

// share lets a decoded e hold one copy of the strings it has in common
// with prev, the entry decoded before it (nil for the first): the topic
// and its id; its value object's key is its own Key, and part names are
// the package's constants. A decoded index then holds each once, not once
// per entry and object (about 100 bytes an entry).
func (e *Entry) share(prev *Entry) {
	if prev != nil {
		if e.Topic == prev.Topic {
			e.Topic = prev.Topic
		}
		if e.TopicID == prev.TopicID {
			e.TopicID = prev.TopicID
		}
	}
	for i := range e.Objects {
		ob := &e.Objects[i]
		if ob.Key == e.Key {
			ob.Key = e.Key
		}
		for _, part := range []string{PartValue, PartKeys, PartHeaders} {
			if ob.Part == part {
				ob.Part = part
			}
		}
	}
}

// Validate checks the entry's own consistency (see the package doc for the
// rules). Its error names the field.
func (e *Entry) Validate() error {
	if e.V != Version1 && e.V != Version2 {
		return fmt.Errorf("v is %d, this reader knows %d and %d", e.V, Version1, Version2)
	}
	if err := validTopic(e.Topic); err != nil {
		return fmt.Errorf("topic: %w", err)
	}
	if e.Partition < 0 {
		return fmt.Errorf("partition %d is negative", e.Partition)
	}
	if e.Key == "" {
		return errors.New("key is empty")
	}
	if len(e.Objects) == 0 {
		return errors.New("objects is empty")
	}
	seen := map[string]bool{}
	for i, o := range e.Objects {
		switch o.Part {
		case PartValue, PartKeys, PartHeaders:
		default:
			return fmt.Errorf("objects[%d]: part %q is not \"\", %q or %q", i, o.Part, PartKeys, PartHeaders)
		}
		if seen[o.Part] {
			return fmt.Errorf("objects[%d]: a second %q object", i, o.Part)
		}
		seen[o.Part] = true
		if o.Key == "" {
			return fmt.Errorf("objects[%d]: key is empty", i)
		}
		if o.Size < 0 {
			return fmt.Errorf("objects[%d]: size %d is negative", i, o.Size)
		}
		if err := e.validateSums(o); err != nil {
			return fmt.Errorf("objects[%d]: %w", i, err)
		}
	}
	main := PartValue
	if e.Tombstone {
		main = PartKeys
		if seen[PartValue] {
			return errors.New("a tombstone entry has a value object")
		}
	}
	if m := e.Part(main); m == nil || m.Key != e.Key {
		return fmt.Errorf("no %q object with the entry's key %q", main, e.Key)
	}
	if len(e.Runs) == 0 {
		return errors.New("runs is empty")
	}
	var n int64
	for i, r := range e.Runs {
		if r.First < 0 || r.Last < r.First {
			return fmt.Errorf("runs[%d] [%d,%d] is not a range of offsets", i, r.First, r.Last)
		}
		if i > 0 && r.First <= e.Runs[i-1].Last+1 {
			return fmt.Errorf("runs[%d] [%d,%d] does not start after runs[%d] ends at %d plus one",
				i, r.First, r.Last, i-1, e.Runs[i-1].Last)
		}
		n += r.Len()
	}
	if n != e.Records {
		return fmt.Errorf("records is %d, the runs hold %d offsets", e.Records, n)
	}
	if e.From < 0 || e.From > e.First() {
		return fmt.Errorf("from %d is not between 0 and the first offset %d", e.From, e.First())
	}
	if e.Commit <= e.Last() {
		return fmt.Errorf("commit %d is not above the last offset %d", e.Commit, e.Last())
	}
	return e.validateRest()
}

// validateRest checks the fields after commit: timestamps, topic id,
// max_record_bytes and null_keys, lost.
func (e *Entry) validateRest() error {
	if e.MinTS > e.MaxTS {
		return fmt.Errorf("min_ts %d is above max_ts %d", e.MinTS, e.MaxTS)
	}
	if e.TopicID != "" {
		if _, err := ParseTopicID(e.TopicID); err != nil {
			return fmt.Errorf("topic_id: %w", err)
		}
	}
	if err := e.validateRecordFacts(); err != nil {
		return err
	}
	return e.validateLost()
}

// validateRecordFacts checks max_record_bytes and null_keys: not
// negative, at most records null keys, and null keys only with
// max_record_bytes (which says the sink recorded both).
func (e *Entry) validateRecordFacts() error {
	if e.MaxRecordBytes < 0 || e.NullKeys < 0 || e.NullKeys > e.Records || (e.NullKeys > 0 && e.MaxRecordBytes == 0) {
		return fmt.Errorf("max_record_bytes %d and null_keys %d: want max_record_bytes >= 0 and, with null_keys, above 0, and 0 <= null_keys <= records %d",
			e.MaxRecordBytes, e.NullKeys, e.Records)
	}
	return nil
}

// validateSums checks an object's checksums for the entry's version: v1
// has a SHA-256 and no CRC32C, v2 a CRC32C and maybe a SHA-256.
func (e *Entry) validateSums(o Object) error {
	if e.V == Version1 && o.CRC32C != "" {
		return fmt.Errorf("crc32c %q in a v%d entry (v%d has sha256 only)", o.CRC32C, Version1, Version1)
	}
	if e.V == Version2 {
		if o.CRC32C == "" {
			return errors.New("crc32c is missing")
		}
		if _, err := ParseCRC32C(o.CRC32C); err != nil {
			return fmt.Errorf("crc32c: %w", err)
		}
		if o.SHA256 == "" {
			return nil
		}
	}
	if !validSHA256(o.SHA256) {
		return fmt.Errorf("sha256 %q is not 64 lower case hex digits", o.SHA256)
	}
	return nil
}

// validateLost checks that the lost runs lie in [From, Commit-1], in
// increasing order, disjoint and not touching, and share no offset with
// the runs the objects hold.
func (e *Entry) validateLost() error {
	for i, r := range e.Lost {
		if r.First < e.From || r.Last < r.First || r.Last >= e.Commit {
			return fmt.Errorf("lost[%d] [%d,%d] is not a range of offsets in [from %d, commit %d)", i, r.First, r.Last, e.From, e.Commit)
		}
		if i > 0 && r.First <= e.Lost[i-1].Last+1 {
			return fmt.Errorf("lost[%d] [%d,%d] does not start after lost[%d] ends at %d plus one", i, r.First, r.Last, i-1, e.Lost[i-1].Last)
		}
		for _, h := range e.Runs {
			if r.First <= h.Last && h.First <= r.Last {
				return fmt.Errorf("lost[%d] [%d,%d] overlaps the held run [%d,%d]", i, r.First, r.Last, h.First, h.Last)
			}
		}
	}
	return nil
}

func validSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Timed tells whether e records its records' timestamps: entries of
// objects without any (min_ts and max_ts 0) and entries `kafkas3 index
// rebuild --from-objects` wrote for objects without envelopes (the widest
// range, math.MinInt64 to math.MaxInt64) do not.
func (e *Entry) Timed() bool {
	return !(e.MinTS == 0 && e.MaxTS == 0) && !(e.MinTS == math.MinInt64 && e.MaxTS == math.MaxInt64)
}
