package objindex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
)

// errEmpty marks an object without records: no entry can describe it.
var errEmpty = errors.New("no records")

// decoded is what the records of one object say.
type decoded struct {
	records  int64
	envelope bool
	offsets  []int64 // an envelope object's, in order
	minTS    int64   // the records' timestamps, when the format holds them; else
	maxTS    int64   // math.MinInt64 and math.MaxInt64
}

// entry reads o, an object of partition p, and its parallel objects, and
// returns its entry (Commit and From set from its offsets). Its errors
// name the object's key; an object without records gives errEmpty.
func entry(ctx context.Context, st index.Store, opt Options, p tp, o *object) (index.Entry, error) {
	e := index.Entry{V: index.Version2, Topic: p.topic, Partition: p.part, Key: o.key, Tombstone: o.tombstone}
	f := opt.Format
	part := index.PartValue
	if o.tombstone {
		part = index.PartKeys
		var err error
		if f, err = format.ForParallel(o.keys.ext, opt.Format, true); err != nil {
			return e, fmt.Errorf("object %q: %w", o.key, err)
		}
	}
	obj, d, err := readDecoded(ctx, st, opt, o.key, part, f, !o.tombstone)
	if err != nil {
		return e, err
	}
	if d.records == 0 {
		return e, fmt.Errorf("object %q: %w", o.key, errEmpty)
	}
	e.Objects = append(e.Objects, obj)
	for _, t := range []struct {
		tw   *twin
		part string
	}{{o.keys, index.PartKeys}, {o.headers, index.PartHeaders}} {
		if t.tw == nil || (o.tombstone && t.part == index.PartKeys) {
			continue
		}
		obj, err := readSummed(ctx, st, opt, t.tw.key, t.part)
		if err != nil {
			return e, err
		}
		e.Objects = append(e.Objects, obj)
	}
	if e.Runs, err = runsOf(o, d); err != nil {
		return e, err
	}
	e.Records, e.Envelope, e.MinTS, e.MaxTS = d.records, d.envelope, d.minTS, d.maxTS
	e.From, e.Commit = e.First(), e.Last()+1
	if err := e.Validate(); err != nil {
		return e, fmt.Errorf("object %q: %w", o.key, err)
	}
	return e, nil
}

// runsOf returns the offsets of o's records as runs: an envelope
// object's own, else consecutive from the start offset of its name.
func runsOf(o *object, d decoded) ([]index.Run, error) {
	if !d.envelope {
		return []index.Run{{First: o.start, Last: o.start + d.records - 1}}, nil
	}
	var runs []index.Run
	for i, off := range d.offsets {
		switch {
		case i > 0 && off <= d.offsets[i-1]:
			return nil, fmt.Errorf("object %q: record %d has offset %d, not above record %d's %d", o.key, i, off, i-1, d.offsets[i-1])
		case off < 0:
			return nil, fmt.Errorf("object %q: record %d has offset %d", o.key, i, off)
		case len(runs) > 0 && runs[len(runs)-1].Last+1 == off:
			runs[len(runs)-1].Last = off
		default:
			runs = append(runs, index.Run{First: off, Last: off})
		}
	}
	return runs, nil
}

// readDecoded reads the object at key whole: checksums it and decodes it
// with f (envelopes detected when detect is set).
func readDecoded(ctx context.Context, st index.Store, opt Options, key, part string, f format.Format, detect bool) (index.Object, decoded, error) {
	var d decoded
	rc, err := st.Open(ctx, key)
	if err != nil {
		return index.Object{}, d, fmt.Errorf("read object %q: %w", key, err)
	}
	defer rc.Close()
	sum := index.NewSummer(opt.SHA256)
	r := io.TeeReader(rc, sum)
	rd, err := f.NewReader(r)
	if err != nil {
		return index.Object{}, d, fmt.Errorf("object %q does not decode: %w", key, err)
	}
	var er *format.EnvelopeReader
	if detect {
		er = format.ReadEnvelopes(rd, format.EnvelopeDetect)
		rd = er
	}
	if err := d.read(rd, er, key); err != nil {
		return index.Object{}, d, err
	}
	d.envelope = er != nil && er.Envelopes()
	if _, err := io.Copy(io.Discard, r); err != nil {
		return index.Object{}, d, fmt.Errorf("read object %q: %w", key, err)
	}
	return sum.Object(key, part), d, nil
}

// read counts rd's records and, when env (rd, when not nil) finds
// envelopes, notes their offsets and timestamps.
func (d *decoded) read(rd format.RecordReader, env *format.EnvelopeReader, key string) error {
	// Without a timestamp the range is unbounded: any time (see the
	// package doc).
	d.minTS, d.maxTS = math.MinInt64, math.MaxInt64
	tsSeen := false
	for {
		rec, err := rd.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("object %q does not decode after %d records: %w", key, d.records, err)
		}
		if env != nil && env.Envelopes() {
			d.offsets = append(d.offsets, rec.Offset)
			if ts := rec.Timestamp.UnixMilli(); !rec.Timestamp.IsZero() {
				if !tsSeen || ts < d.minTS {
					d.minTS = ts
				}
				if !tsSeen || ts > d.maxTS {
					d.maxTS = ts
				}
				tsSeen = true
			}
		}
		d.records++
	}
}

// readSummed reads the object at key whole and checksums it.
func readSummed(ctx context.Context, st index.Store, opt Options, key, part string) (index.Object, error) {
	rc, err := st.Open(ctx, key)
	if err != nil {
		return index.Object{}, fmt.Errorf("read object %q: %w", key, err)
	}
	defer rc.Close()
	sum := index.NewSummer(opt.SHA256)
	if _, err := io.Copy(sum, rc); err != nil {
		return index.Object{}, fmt.Errorf("read object %q: %w", key, err)
	}
	return sum.Object(key, part), nil
}
