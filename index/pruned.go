package index

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Pruned archives
//
// `kafkas3 prune` deletes the objects of a partition below an offset, the
// low watermark W, and first records W next to the partition's
// checkpoints, at
//
//	<prefix>checkpoints/<topic>/<partition>/pruned-<W, 20 digits>.json
//
// (PrunedKey), one JSON object and "\n" (Watermark, EncodeWatermark):
//
//	{"pruned":1,"topic":"orders","partition":0,"below":1200,"time_ms":1700000000123,"cutoff_ms":1690000000000}
//
// Every offset below W was pruned on purpose: a reader drops each entry
// that holds only offsets below it (Below: its last offset, or for an
// entry without runs its commit, at or below W-1), whatever its writer,
// so the objects the prune deleted (and those it could not: Object Lock)
// are neither missing nor gaps; offsets below the first entry left are
// not judged (see Analyze). The load lists the checkpoints folder anyway,
// so the watermark costs no request; a partition with several takes the
// highest (a prune writes the new one before it deletes the older).
// Index.Pruned names each partition's watermark and Index.PrunedEntries
// counts the entries dropped.

// prunedName starts a watermark's name in the checkpoints folder.
const prunedName = "pruned-"

// prunedExt ends a watermark's key.
const prunedExt = ".json"

// WatermarkVersion is the value of a watermark's "pruned" field.
const WatermarkVersion = 1

// Watermark is a partition's low watermark: every offset below Below was
// pruned on purpose.
type Watermark struct {
	Pruned    int    `json:"pruned"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Below     int64  `json:"below"`
	// TimeMS is when the prune ran, CutoffMS the record time it pruned
	// before (Unix ms).
	TimeMS   int64 `json:"time_ms"`
	CutoffMS int64 `json:"cutoff_ms"`
}

// PrunedKey returns the key of a partition's watermark at below.
func PrunedKey(prefix, topic string, p int32, below int64) string {
	return CheckpointPartitionDir(prefix, topic, p) + prunedName + stamp(below, "") + prunedExt
}

// PrunedDoneKey returns the key that says the prune to below finished
// (kafkas3 prune writes it last): the objects and index objects below it
// are gone, so a later prune need not delete them again.
func PrunedDoneKey(prefix, topic string, p int32, below int64) string {
	return CheckpointPartitionDir(prefix, topic, p) + prunedName + stamp(below, "") + prunedDone + prunedExt
}

// prunedDone marks a done key (PrunedDoneKey).
const prunedDone = "-done"

// ParsePrunedKey returns the watermark a key of a partition's
// checkpoints folder names (PrunedKey or PrunedDoneKey), whether it is a
// done key, and whether it names one at all.
func ParsePrunedKey(key string) (below int64, done, ok bool, err error) {
	below, ok, err = parsePrunedKey(key)
	return below, ok && strings.HasSuffix(key, prunedDone+prunedExt), ok, err
}

// parsePrunedKey returns the watermark a key of a partition's checkpoints
// folder names, and whether it names one.
func parsePrunedKey(key string) (int64, bool, error) {
	i := strings.LastIndexByte(key, '/')
	name := key[i+1:]
	rest, ok := strings.CutPrefix(name, prunedName)
	if !ok {
		return 0, false, nil
	}
	digits, ok := strings.CutSuffix(rest, prunedExt)
	digits = strings.TrimSuffix(digits, prunedDone)
	if !ok || len(digits) != commitWidth {
		return 0, true, fmt.Errorf("%w: %q is not a watermark key (pruned-<offset, %d digits>%s)", ErrMalformed, key, commitWidth, prunedExt)
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n < 0 {
		return 0, true, fmt.Errorf("%w: %q is not a watermark key: %q is not an offset", ErrMalformed, key, digits)
	}
	return n, true, nil
}

// EncodeWatermark returns w's bytes: one JSON object and "\n".
func EncodeWatermark(w Watermark) []byte {
	w.Pruned = WatermarkVersion
	b, _ := json.Marshal(w) // cannot fail: strings and numbers
	return append(b, '\n')
}

// DecodeWatermark reads the watermark at key, refusing another version,
// unknown fields, and a topic, partition or offset other than the key's.
func DecodeWatermark(key string, b []byte) (Watermark, error) {
	var w Watermark
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&w); err != nil {
		return w, fmt.Errorf("%w: watermark %q: %v", ErrMalformed, key, err)
	}
	below, ok, err := parsePrunedKey(key)
	switch {
	case err != nil:
		return w, err
	case !ok:
		return w, fmt.Errorf("%w: %q is not a watermark key", ErrMalformed, key)
	case w.Pruned != WatermarkVersion:
		return w, fmt.Errorf("%w: watermark %q: version %d, want %d", ErrMalformed, key, w.Pruned, WatermarkVersion)
	case w.Below != below || !strings.HasSuffix(key, PrunedKey("", w.Topic, w.Partition, w.Below)):
		return w, fmt.Errorf("%w: watermark %q holds topic %q partition %d below %d", ErrMalformed, key, w.Topic, w.Partition, w.Below)
	}
	return w, nil
}

// Below tells whether e holds only offsets below w: its last offset (or,
// without runs, its commit) is at most w-1.
func (e *Entry) Below(w int64) bool {
	if n := len(e.Runs); n > 0 {
		return e.Runs[n-1].Last < w
	}
	return e.Commit <= w
}

// Pruned is a partition's watermark as a load found it.
type Pruned struct {
	Topic     string
	Partition int32
	Below     int64
}

// dropPruned removes, in place, the entries of es below their
// partition's watermark in below, and returns what is left and how many
// went.
func dropPruned(es []Entry, below map[LogPartition]int64) ([]Entry, int) {
	if len(below) == 0 {
		return es, 0
	}
	kept := 0
	for i := range es {
		if w, ok := below[LogPartition{Topic: es[i].Topic, Partition: es[i].Partition}]; ok && es[i].Below(w) {
			continue
		}
		es[kept] = es[i]
		kept++
	}
	dropped := len(es) - kept
	clear(es[kept:])
	return es[:kept:kept], dropped
}

// applyPruned drops from ix, unless keep, the entries below the
// watermarks (partition -> W, none when empty) and names them in
// ix.Pruned.
func (ix *Index) applyPruned(below map[LogPartition]int64, keep bool) {
	if len(below) == 0 {
		return
	}
	if !keep {
		var n int
		ix.Entries, n = dropPruned(ix.Entries, below)
		ix.PrunedEntries += n
		ix.All, _ = dropPruned(ix.All, below)
	}
	for lp, w := range below {
		ix.Pruned = append(ix.Pruned, Pruned{Topic: lp.Topic, Partition: lp.Partition, Below: w})
	}
}
