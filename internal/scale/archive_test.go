package scale

import (
	"bytes"
	"fmt"
	"hash/crc32"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/partition"
)

// topic is the simulated archive's one topic.
const topic = "sim"

// ckptInterval is kafkas3.index.checkpoint.interval's default: a
// checkpoint every 100 index objects of a partition.
const ckptInterval = 100

// ckptTail is the index objects of each partition written after its
// newest checkpoint: a sink between two checkpoints.
const ckptTail = 50

// value is every value object's bytes: one record "v" in the bytes format
// (separator "\n").
var value = []byte("v\n")

// build writes into a new simStore an archive of n value objects of one
// record each, spread over parts partitions: per object one index object
// (one rotation: a v2 entry with the object's CRC32C and ETag, from its offset to
// commit offset+1), and per partition its newest checkpoint, at the last
// multiple of ckptInterval index objects that leaves ckptTail after it.
// Older checkpoints are not written: a reader lists them (one listing
// request per partition either way) but reads only the newest.
func build(n, parts int, keys partition.KeyConfig, ext string) (*simStore, error) {
	st := newSimStore()
	crc := index.FormatCRC32C(crcOf(value))
	etag := etagOf(value) // what the sink records: the store's answer to its PutObject
	for p := range int32(parts) {
		per := n / parts
		if int(p) < n%parts {
			per++
		}
		entries := make([]index.Entry, 0, per)
		for i := range int64(per) {
			key := keys.ObjectKey(partition.ObjectName{Topic: topic, Encoded: fmt.Sprintf("partition=%d", p), Partition: p, StartOffset: i, Ext: ext})
			e := index.Entry{V: index.Version2, Topic: topic, Partition: p, Key: key,
				Objects: []index.Object{{Key: key, Size: int64(len(value)), CRC32C: crc, ETag: etag}},
				Runs:    []index.Run{{First: i, Last: i}}, Records: 1, From: i, Commit: i + 1, MinTS: stampOf(i), MaxTS: stampOf(i)}
			b, err := index.Encode([]index.Entry{e})
			if err != nil {
				return nil, err
			}
			st.add(key, value)
			st.add(index.Key(index.DefaultPrefix, topic, p, e.Commit, writer), b)
			entries = append(entries, e)
		}
		if err := addCheckpoint(st, p, entries); err != nil {
			return nil, err
		}
	}
	st.seal()
	return st, nil
}

// stampOf is the timestamp (ms) of the record at offset i of each
// partition: one a second from 2026-12-01T00:00:00Z.
func stampOf(i int64) int64 { return 1_796_083_200_000 + i*1000 }

// writer is the simulated sink's writer (index.WriterOf its group).
var writer = index.WriterOf("sim-sink")

func crcOf(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// addCheckpoint writes partition p's newest checkpoint over entries (in
// offset order, one per index object), if it has one.
func addCheckpoint(st *simStore, p int32, entries []index.Entry) error {
	upTo := (len(entries) - ckptTail) / ckptInterval * ckptInterval
	if upTo <= 0 {
		return nil
	}
	covered := entries[:upTo]
	commit := covered[upTo-1].Commit
	var buf bytes.Buffer
	cw, err := index.NewCheckpointWriter(&buf, index.CheckpointHeader{Topic: topic, Partition: p, Writer: writer, Commit: commit, LogObjects: upTo})
	if err != nil {
		return err
	}
	for i := range covered {
		if err := cw.Add(&covered[i]); err != nil {
			return err
		}
	}
	if err := cw.Close(0); err != nil {
		return err
	}
	st.add(index.CheckpointKey(index.DefaultPrefix, topic, p, commit, writer), buf.Bytes())
	return nil
}
