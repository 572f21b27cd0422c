//go:build integration

package bench

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Data kinds: what a record's value looks like.
const (
	// kindText is a JSON event whose text field is drawn from a small
	// vocabulary: compresses about 3x with gzip, like typical event data.
	kindText = "text"
	// kindRandom is a JSON object holding base64 of random bytes: gzip
	// shrinks it only to about 3/4, so objects stay large.
	kindRandom = "random"
	// kindLetters is a JSON object whose text field holds random lowercase
	// letters (issue 12's random-letter data: gzip about 1.6x, nothing for
	// the compressor to find beyond the letters' entropy).
	kindLetters = "letters"
	// kindAvro is a record of the Avro schema eventSchema in the Confluent
	// wire format (magic byte 0, the 4-byte schema id, the Avro binary
	// encoding), its text field drawn from the same vocabulary as kindText.
	kindAvro = "avro"
)

// bodyPool is how many distinct bodies a generator draws from. Bodies are
// picked pseudo-randomly, so a repeat inside gzip's 32 KiB window is rare.
const bodyPool = 4096

// dataset describes the records of one topic. Record i goes to partition
// (i / Run) % Partitions (Run 0 means 1) and its value is exactly ValueSize bytes of valid JSON
// without newlines, so the bytes format (separator "\n") and the JSON format
// both write and read it back unchanged.
type dataset struct {
	Kind       string `json:"kind"`
	Topic      string `json:"topic"`
	Partitions int32  `json:"partitions"`
	Records    int64  `json:"records"`
	ValueSize  int    `json:"value_size"`
	// Run is how many consecutive records go to one partition before the
	// next: with 200 partitions, one record each would make tiny batches.
	Run int64 `json:"run,omitempty"`
	// SchemaID is the registry id written in each kindAvro value's header.
	SchemaID uint32 `json:"schema_id,omitempty"`
}

// partition is the partition of record i.
func (d dataset) partition(i int64) int32 {
	return int32((i / max(d.Run, 1)) % int64(d.Partitions))
}

// Bytes is the total value bytes of the data set.
func (d dataset) Bytes() int64 { return d.Records * int64(d.ValueSize) }

// generator builds the values of a data set cheaply from a pool of bodies.
type generator struct {
	d      dataset
	words  []string
	bodies []string
}

// vocabulary is the word list of kindText bodies.
const vocabulary = `order payment shipped delivered cancelled refund customer account
	invoice warehouse north south east west premium standard express return pending approved
	declined retry checkout cart product category discount coupon loyalty points session mobile
	desktop browser region currency amount quantity price total subtotal tax vendor supplier
	carrier tracking address city country postal street status updated created deleted`

func newGenerator(d dataset) (*generator, error) {
	if d.ValueSize < 128 {
		return nil, fmt.Errorf("bench: value size %d is below 128 bytes", d.ValueSize)
	}
	g := &generator{d: d, words: strings.Fields(vocabulary), bodies: make([]string, bodyPool)}
	// The seed is fixed: data sets of the same kind and size hold the same
	// values whatever their topic, so a baseline producer can write exactly
	// the records an archive holds.
	rnd := rand.New(rand.NewPCG(uint64(d.ValueSize), 42))
	for i := range g.bodies {
		var sb strings.Builder
		switch d.Kind {
		case kindText, kindAvro:
			for sb.Len() < d.ValueSize {
				sb.WriteString(g.words[rnd.IntN(len(g.words))])
				sb.WriteByte(' ')
			}
		case kindLetters:
			b := make([]byte, d.ValueSize)
			for j := range b {
				b[j] = byte('a' + rnd.IntN(26))
			}
			sb.Write(b)
		case kindRandom:
			raw := make([]byte, d.ValueSize)
			for j := range raw {
				raw[j] = byte(rnd.Uint32())
			}
			sb.WriteString(base64.StdEncoding.EncodeToString(raw))
		default:
			return nil, fmt.Errorf("bench: unknown data kind %q", d.Kind)
		}
		g.bodies[i] = sb.String()
	}
	return g, nil
}

// value appends record i's value to dst.
func (g *generator) value(dst []byte, i int64) []byte {
	start := len(dst)
	if g.d.Kind == kindAvro {
		return g.avroValue(dst, i)
	}
	switch g.d.Kind {
	case kindText:
		dst = append(dst, `{"id":`...)
		dst = strconv.AppendInt(dst, i, 10)
		dst = append(dst, `,"user":"user-`...)
		dst = strconv.AppendInt(dst, i%9973, 10)
		dst = append(dst, `","event":"`...)
		dst = append(dst, g.words[i%int64(len(g.words))]...)
		dst = append(dst, `","ts":`...)
		dst = strconv.AppendInt(dst, 1_700_000_000_000+i, 10)
		dst = append(dst, `,"text":"`...)
	case kindLetters:
		dst = append(dst, `{"id":`...)
		dst = strconv.AppendInt(dst, i, 10)
		dst = append(dst, `,"text":"`...)
	default:
		dst = append(dst, `{"id":`...)
		dst = strconv.AppendInt(dst, i, 10)
		dst = append(dst, `,"blob":"`...)
	}
	body := g.bodies[(uint64(i)*2654435761)%bodyPool]
	room := g.d.ValueSize - (len(dst) - start) - 2
	dst = append(dst, body[:room]...)
	return append(dst, `"}`...)
}
