package index

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	"github.com/klauspost/compress/gzip"
)

// ckptDir is the folder under the prefix that holds the checkpoints.
const ckptDir = "checkpoints/"

// ckptExt ends every checkpoint key: gzip'd JSON lines.
const ckptExt = ".jsonl.gz"

// CheckpointVersion is the value of a checkpoint header's "checkpoint"
// field. A reader refuses other versions.
const CheckpointVersion = 1

// maxCheckpointLine bounds one line of a checkpoint.
const maxCheckpointLine = 4 << 20

// CheckpointDir returns "<prefix>checkpoints/".
func CheckpointDir(prefix string) string { return prefix + ckptDir }

// CheckpointPartitionDir returns "<prefix>checkpoints/<topic>/<partition>/".
func CheckpointPartitionDir(prefix, topic string, p int32) string {
	return prefix + ckptDir + topic + "/" + strconv.FormatInt(int64(p), 10) + "/"
}

// CheckpointKey returns the key of writer's checkpoint of a partition at
// commit: "<prefix>checkpoints/<topic>/<partition>/<commit, 20 digits>-<writer>.jsonl.gz"
// ("<commit>.jsonl.gz" for the empty writer of an older kafkas3's log).
func CheckpointKey(prefix, topic string, p int32, commit int64, writer string) string {
	return CheckpointPartitionDir(prefix, topic, p) + stamp(commit, writer) + ckptExt
}

// ParseCheckpointKey takes a checkpoint key apart, the inverse of
// CheckpointKey. Its error wraps ErrMalformed and quotes the key.
func ParseCheckpointKey(key string) (KeyName, error) {
	rest, ok := strings.CutSuffix(key, ckptExt)
	if !ok {
		return KeyName{}, fmt.Errorf("%w: %q is not a checkpoint key (<prefix>checkpoints/<topic>/<partition>/<commit, 20 digits>-<writer>%s): no %s extension",
			ErrMalformed, key, ckptExt, ckptExt)
	}
	// The index key parser checks the rest: the same folders and name.
	parts := strings.Split(rest, "/")
	if len(parts) < 4 || parts[len(parts)-4]+"/" != ckptDir {
		return KeyName{}, fmt.Errorf("%w: %q is not a checkpoint key: not in a %s<topic>/<partition>/ folder", ErrMalformed, key, ckptDir)
	}
	parts[len(parts)-4] = strings.TrimSuffix(dir, "/")
	kn, err := ParseKey(strings.Join(parts, "/") + ext)
	if err != nil {
		return KeyName{}, fmt.Errorf("%w: %q is not a checkpoint key: %w", ErrMalformed, key, errors.Unwrap(err))
	}
	return kn, nil
}

// CheckpointHeader is the first line of a checkpoint: which log it
// covers. A checkpoint of Writer at Commit holds the entries of every
// index object of Writer in the partition with a commit at or below
// Commit, LogObjects of them.
type CheckpointHeader struct {
	Checkpoint int    `json:"checkpoint"`
	Topic      string `json:"topic"`
	Partition  int32  `json:"partition"`
	Writer     string `json:"writer"`
	Commit     int64  `json:"commit"`
	LogObjects int    `json:"log_objects"`
	// Void, when set, makes this a void checkpoint: Writer's log above
	// *Void is being written again (its group's offset moved back to
	// *Void, see VoidCheckpoint), so this checkpoint holds no entry and
	// readers use Writer's newest checkpoint at or below *Void instead.
	Void *int64 `json:"void,omitempty"`
}

// VoidCheckpoint returns the bytes of writer's void checkpoint of a
// partition at commit, which voids it for readers below: the writer's log
// above below is rewritten (a sink whose committed offset is below,
// lower than this checkpoint's commit, replays from there), so every
// checkpoint of the writer above below no longer is a function of its
// log. below must be lower than commit.
func VoidCheckpoint(topic string, p int32, writer string, commit, below int64) ([]byte, error) {
	var buf bytes.Buffer
	cw, err := NewCheckpointWriter(&buf, CheckpointHeader{Topic: topic, Partition: p, Writer: writer, Commit: commit, Void: &below})
	if err != nil {
		return nil, err
	}
	if err := cw.Close(0); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// checkpointTrailer is the last line of a checkpoint: how many entries it
// holds and how many of the log's entries it left out (Restamped).
type checkpointTrailer struct {
	Entries int `json:"entries"`
	Dropped int `json:"dropped"`
}

// Restamped reports whether older, an entry of the same object key as
// newer with a lower commit (or the same commit in a later index object),
// differs from newer only in from, commit and lost: the sink wrote the
// same objects again with a new commit (a restamp of skipped offsets).
// Readers never need such an entry: every choice between the entries of a
// key looks at the objects, runs and records, never at commit, from or
// lost, and prefers the newer of two that match. Checkpoints and
// Index.All leave it out (it counts in Index.Superseded).
func Restamped(older, newer *Entry) bool {
	a, b := *older, *newer
	a.From, a.Commit, a.Lost = 0, 0, nil
	b.From, b.Commit, b.Lost = 0, 0, nil
	return reflect.DeepEqual(a, b)
}

// CheckpointWriter streams one checkpoint: NewCheckpointWriter writes the
// header, Add each entry in checkpoint order (first offset, key, commit
// descending), Close the trailer. The same entries give the same bytes.
type CheckpointWriter struct {
	h    CheckpointHeader
	gz   *gzip.Writer
	prev *Entry
	n    int
}

// NewCheckpointWriter starts a checkpoint with header h (its Checkpoint
// field is set to CheckpointVersion) on w.
func NewCheckpointWriter(w io.Writer, h CheckpointHeader) (*CheckpointWriter, error) {
	h.Checkpoint = CheckpointVersion
	if err := h.validate(); err != nil {
		return nil, fmt.Errorf("%w: checkpoint header: %w", ErrMalformed, err)
	}
	gz, err := gzip.NewWriterLevel(w, gzip.DefaultCompression)
	if err != nil {
		return nil, err
	}
	cw := &CheckpointWriter{h: h, gz: gz}
	return cw, cw.line(&h)
}

func (cw *CheckpointWriter) line(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := cw.gz.Write(append(b, '\n')); err != nil {
		return err
	}
	return nil
}

// Add writes one entry. It must be valid, of the header's topic and
// partition, with a commit at or below the header's, and follow the
// previous entry in checkpoint order.
func (cw *CheckpointWriter) Add(e *Entry) error {
	if err := cw.h.check(e, cw.prev); err != nil {
		return fmt.Errorf("%w: checkpoint entry %q: %w", ErrMalformed, e.Key, err)
	}
	if err := cw.line(e); err != nil {
		return fmt.Errorf("checkpoint entry %q: %w", e.Key, err)
	}
	c := *e
	cw.prev = &c
	cw.n++
	return nil
}

// Close writes the trailer, with the number of the log's entries left out
// (Restamped), and flushes; it does not close the underlying writer.
func (cw *CheckpointWriter) Close(dropped int) error {
	if err := cw.line(&checkpointTrailer{Entries: cw.n, Dropped: dropped}); err != nil {
		return err
	}
	return cw.gz.Close()
}

func (h *CheckpointHeader) validate() error {
	if h.Checkpoint != CheckpointVersion {
		return fmt.Errorf("checkpoint is %d, this reader knows %d", h.Checkpoint, CheckpointVersion)
	}
	if err := validTopic(h.Topic); err != nil {
		return fmt.Errorf("topic: %w", err)
	}
	if h.Partition < 0 {
		return fmt.Errorf("partition %d is negative", h.Partition)
	}
	if h.Writer != "" && !isWriter(h.Writer) {
		return fmt.Errorf("writer %q is not %d lower-case hex digits", h.Writer, writerWidth)
	}
	if h.Commit < 0 || h.LogObjects < 0 {
		return fmt.Errorf("commit %d or log_objects %d is negative", h.Commit, h.LogObjects)
	}
	if h.Void != nil && (*h.Void < 0 || *h.Void >= h.Commit || h.LogObjects != 0) {
		return fmt.Errorf("void checkpoint: void %d must be in [0, commit %d) and log_objects %d 0", *h.Void, h.Commit, h.LogObjects)
	}
	return nil
}

// check tells whether e may follow prev in a checkpoint with header h.
func (h *CheckpointHeader) check(e, prev *Entry) error {
	if err := e.Validate(); err != nil {
		return err
	}
	if h.Void != nil {
		return fmt.Errorf("entry in a void checkpoint")
	}
	if e.Topic != h.Topic || e.Partition != h.Partition || e.Commit > h.Commit {
		return fmt.Errorf("entry of topic %q partition %d commit %d in the checkpoint of topic %q partition %d commit %d",
			e.Topic, e.Partition, e.Commit, h.Topic, h.Partition, h.Commit)
	}
	if prev != nil && !ckptBefore(prev, e) {
		return fmt.Errorf("entry (first offset %d, commit %d) does not follow entry %q (first offset %d, commit %d) in checkpoint order",
			e.First(), e.Commit, prev.Key, prev.First(), prev.Commit)
	}
	return nil
}

// ckptBefore is checkpoint order: first offset, key, then commit
// descending; one writer has one entry per key and commit.
func ckptBefore(a, b *Entry) bool {
	if a.First() != b.First() {
		return a.First() < b.First()
	}
	if a.Key != b.Key {
		return a.Key < b.Key
	}
	return a.Commit > b.Commit
}

// ReadCheckpoint reads the checkpoint stored at key (a checkpoint key,
// see ParseCheckpointKey), calls onHeader (when not nil) with its header
// once it is checked, then fn with each entry in order, and returns
// the header and the number of the log's entries the checkpoint left out.
// It refuses anything NewCheckpointWriter would not write: another
// version, a header of another topic, partition, writer or commit than
// the key, an entry CheckpointWriter.Add refuses, unknown fields, a
// missing or wrong trailer, data after it, a damaged gzip stream. Its
// errors wrap ErrMalformed and name the key and line; it never panics
// (FuzzReadCheckpoint). An error from onHeader or fn stops it and is
// returned.
func ReadCheckpoint(key string, r io.Reader, onHeader func(CheckpointHeader) error, fn func(*Entry) error) (CheckpointHeader, int, error) {
	ck, err := ParseCheckpointKey(key)
	if err != nil {
		return CheckpointHeader{}, 0, err
	}
	bad := func(line int, format string, args ...any) error {
		return fmt.Errorf("%w: checkpoint %q line %d: %s", ErrMalformed, key, line, fmt.Sprintf(format, args...))
	}
	gz, err := gzip.NewReader(r)
	if err != nil {
		return CheckpointHeader{}, 0, bad(0, "not gzip: %v", err)
	}
	gz.Multistream(false)
	cr := &ckptReader{br: bufio.NewReaderSize(gz, 64<<10)}
	var h CheckpointHeader
	if err := cr.next(&h); err != nil {
		return h, 0, bad(cr.n, "%v", err)
	}
	if err := h.validate(); err != nil {
		return h, 0, bad(1, "%v", err)
	}
	if h.Topic != ck.Topic || h.Partition != ck.Partition || h.Writer != ck.Writer || h.Commit != ck.Commit {
		return h, 0, bad(1, "header of topic %q partition %d writer %q commit %d in the checkpoint of topic %q partition %d writer %q commit %d",
			h.Topic, h.Partition, h.Writer, h.Commit, ck.Topic, ck.Partition, ck.Writer, ck.Commit)
	}
	if onHeader != nil {
		if err := onHeader(h); err != nil {
			return h, 0, err
		}
	}
	dropped, err := cr.entries(&h, fn, bad)
	if err != nil {
		return h, 0, err
	}
	return h, dropped, nil
}

// entries reads the entry lines and the trailer of a checkpoint.
func (cr *ckptReader) entries(h *CheckpointHeader, fn func(*Entry) error, bad func(int, string, ...any) error) (int, error) {
	var prev *Entry
	n := 0
	for {
		raw, err := cr.raw()
		if err != nil {
			return 0, bad(cr.n, "%v", err)
		}
		if bytes.HasPrefix(raw, []byte(`{"entries":`)) {
			var t checkpointTrailer
			if err := strictJSON(raw, &t); err != nil {
				return 0, bad(cr.n, "%v", err)
			}
			if t.Entries != n || t.Dropped < 0 || (h.Void != nil && t.Dropped != 0) {
				return 0, bad(cr.n, "the trailer counts %d entries and %d left out, the checkpoint holds %d", t.Entries, t.Dropped, n)
			}
			if _, err := cr.br.ReadByte(); !errors.Is(err, io.EOF) {
				return 0, bad(cr.n+1, "data after the trailer")
			}
			return t.Dropped, nil
		}
		e := new(Entry)
		if err := strictJSON(raw, e); err != nil {
			return 0, bad(cr.n, "%v", err)
		}
		if err := h.check(e, prev); err != nil {
			return 0, bad(cr.n, "%v", err)
		}
		e.share(prev)
		if err := fn(e); err != nil {
			return 0, err
		}
		prev = e
		n++
	}
}

// ckptReader reads the lines of a checkpoint.
type ckptReader struct {
	br *bufio.Reader
	n  int // lines read
}

// raw returns the next line without its newline.
func (cr *ckptReader) raw() ([]byte, error) {
	cr.n++
	var line []byte
	for {
		chunk, err := cr.br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxCheckpointLine {
			return nil, fmt.Errorf("is longer than %d bytes", maxCheckpointLine)
		}
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) == 0:
			return nil, errors.New("missing: the checkpoint ends without its trailer")
		case errors.Is(err, io.EOF):
			return nil, errors.New("does not end in a newline")
		default:
			return nil, err
		}
	}
}

// next decodes the next line into v.
func (cr *ckptReader) next(v any) error {
	raw, err := cr.raw()
	if err != nil {
		return err
	}
	return strictJSON(raw, v)
}

// strictJSON decodes one JSON value from raw, refusing unknown fields and
// anything after the value.
func strictJSON(raw []byte, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return errors.New("is empty")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("has data after the value")
	}
	return nil
}
