package cmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kafkas3/kafkas3/config"
	"github.com/kafkas3/kafkas3/restore"
	"github.com/spf13/cobra"
)

// catFlags are the flags of `kafkas3 cat`.
type catFlags struct {
	archiveFlags
	Topic      string
	Partitions []int32
	Offset     string
	From       string
	Until      string
	Key        string
	KeyRegex   string
	Header     string
	Limit      int64
	Encoding   string
	Format     string
	Scan       bool
}

// ErrNoMatch is returned (exit 1) when cat printed no record.
var ErrNoMatch = errors.New("no record matched")

func newCatCmd(streams IO) *cobra.Command {
	f := &catFlags{}
	c := &cobra.Command{
		Use:   "cat --config FILE --topic TOPIC",
		Short: "Print archived records, without Kafka and without restoring",
		Long: `cat prints the records of one archived topic as JSON lines, or with a
format string, without Kafka. It takes the sink's (or the source's) config
file: store, layout, format and index keys.

Each partition's records come in offset order, partitions in increasing
order. With the archive index (kafkas3.index.prefix) cat opens only the
objects whose offsets and time range can hold what is asked (the index's
entries), reads them record by record and stops at --limit; without an index
it lists the topic's objects and reads them all, and says so on stderr.
Objects the index does not describe (written before the index was enabled,
which kafkas3 verify reports as unindexed) are read only with --scan, which
lists and reads the topic as if it had no index.

A JSON line holds topic, partition, offset, timestamp (Unix milliseconds;
null when the archive keeps none: plain formats without store.envelope),
key, value and headers ([{"key":..,"value":..}]). Keys and headers are
there only when the archive keeps them (store.kafka.keys and
store.kafka.headers objects, or store.envelope); else the key is null and
the headers []. Bytes print as text when they
are valid UTF-8 and as base64 otherwise, marked "key_encoding":"base64"
(value_encoding, and in a header "value_encoding"); --encoding base64 prints
every byte field as base64, --encoding utf8 prints text always (invalid
bytes replaced). Typed values and keys (Avro, Parquet) print as JSON,
marked "value_encoding":"json". A null is null.

-f prints each record with a format string, as kcat -f does: %t topic,
%p partition, %o offset, %T timestamp (ms), %k key, %s value, %K and %S
their lengths (-1 for null), %h headers (name=value, comma separated),
\n \t \\ and %%. Bytes print as they are.

--key and --key-regex match the key's bytes (a string key's text; a typed
key printed as JSON never matches), --header a header's name and value
bytes. --from and --until select by timestamp (inclusive): records of plain objects
carry none of their own, so with the index they are taken when their
object's time range (the entry's min_ts..max_ts) meets the window, and
left out without an index; a note on stderr counts them.

An object that is gone, does not decode to its end or holds another
number of records than its index entry stops cat with exit 1, naming it,
after the records before the damage.

Exit codes: 0 records printed, 1 nothing matched (or the store failed, or
an object is damaged), 2 configuration or flag error.`,
		Example: `  kafkas3 cat --config orders.yaml --topic orders --limit 10
  kafkas3 cat -c orders.yaml --topic orders --partition 3 --offset 1200:1300
  kafkas3 cat -c orders.yaml --topic orders --key 'customer-42' --from 2026-12-01T10:00:00Z
  kafkas3 cat -c orders.yaml --topic orders -f '%o %k %s\n'`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runCatCmd(c.Context(), f, streams)
		},
	}
	fl := c.Flags()
	f.registerStore(fl)
	fl.StringVarP(&f.Topic, "topic", "t", "", "the archived topic to print (required)")
	fl.Int32SliceVar(&f.Partitions, "partition", nil, "only these partitions (repeatable or comma separated; default: every partition)")
	fl.StringVar(&f.Offset, "offset", "", "offsets A:B (inclusive), A: (from A on), :B (up to B) or A (that one)")
	fl.StringVar(&f.From, "from", "", "only records stamped at or after this time: RFC 3339 (2026-12-01T11:00:00Z) or Unix milliseconds")
	fl.StringVar(&f.Until, "until", "", "only records stamped at or before this time: RFC 3339 or Unix milliseconds")
	fl.StringVar(&f.Key, "key", "", "only records whose key is exactly this")
	fl.StringVar(&f.KeyRegex, "key-regex", "", "only records whose whole key matches this regular expression (RE2); records without a key never do")
	fl.StringVar(&f.Header, "header", "", "only records with a header NAME, or NAME=VALUE with that value")
	fl.Int64Var(&f.Limit, "limit", 0, "stop after this many records (0: no limit)")
	fl.StringVar(&f.Encoding, "encoding", "auto", "how JSON lines print keys, values and header values: auto (text when valid UTF-8, else base64), utf8 or base64")
	fl.BoolVar(&f.Scan, "scan", false, "list and read every object of the topic instead of choosing them by the index (objects the index does not describe included)")
	fl.StringVarP(&f.Format, "format", "f", "", `print each record with this format string instead of JSON (kcat's: %k key, %s value, %o offset, ...; "\n" ends a line)`)
	return c
}

// catSelection reads the selection flags.
func (f *catFlags) selection(errs *flagProblems) restore.Selection {
	sel := restore.Selection{Topic: strings.TrimSpace(f.Topic), Partitions: f.Partitions, LastOffset: math.MaxInt64, Limit: f.Limit, Scan: f.Scan}
	if sel.Topic == "" {
		errs.bad("--topic", "is required: the archived topic to print")
	} else if strings.Contains(sel.Topic, ",") {
		errs.bad("--topic", "is %q; cat prints one topic", sel.Topic)
	}
	for _, p := range f.Partitions {
		if p < 0 {
			errs.bad("--partition", "is %d; want a partition number, 0 or more", p)
		}
	}
	if f.Limit < 0 {
		errs.bad("--limit", "is %d; want a number of records, 0 for no limit", f.Limit)
	}
	f.offsets(&sel, errs)
	switch {
	case f.Key != "" && f.KeyRegex != "":
		errs.bad("--key", "is set together with --key-regex; give one")
	case f.Key != "":
		parseFilter(&sel.Filter, regexp.QuoteMeta(f.Key), "", "", errs)
	}
	parseFilter(&sel.Filter, f.KeyRegex, f.Header, "", errs)
	for _, t := range []struct {
		flag, v string
		to      *time.Time
	}{{"--from", f.From, &sel.From}, {"--until", f.Until, &sel.Until}} {
		if strings.TrimSpace(t.v) == "" {
			continue
		}
		tm, err := parseUntil(t.v)
		if err != nil {
			errs.bad(t.flag, "%v", err)
		}
		*t.to = tm
	}
	if !sel.From.IsZero() && !sel.Until.IsZero() && sel.Until.Before(sel.From) {
		errs.bad("--until", "is before --from")
	}
	return sel
}

// offsets reads --offset A[:B].
func (f *catFlags) offsets(sel *restore.Selection, errs *flagProblems) {
	s := strings.TrimSpace(f.Offset)
	if s == "" {
		return
	}
	a, b, ranged := strings.Cut(s, ":")
	bad := func() {
		errs.bad("--offset", "is %q; want A:B, A:, :B or A (offsets, 0 or more, A at most B)", f.Offset)
	}
	num := func(v string, def int64) (int64, bool) {
		if v == "" {
			return def, true
		}
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil && n >= 0
	}
	first, ok1 := num(a, 0)
	last, ok2 := num(b, math.MaxInt64)
	if !ranged {
		last, ok2 = first, a != ""
	}
	if !ok1 || !ok2 || last < first {
		bad()
		return
	}
	sel.FirstOffset, sel.LastOffset = first, last
}

// encoding reads --encoding.
func (f *catFlags) encoding(errs *flagProblems) byteEncoding {
	switch e := byteEncoding(strings.TrimSpace(f.Encoding)); e {
	case encodingAuto, encodingUTF8, encodingBase64:
		return e
	}
	errs.bad("--encoding", "is %q; want auto, utf8 or base64", f.Encoding)
	return encodingAuto
}

func runCatCmd(ctx context.Context, f *catFlags, streams IO) error {
	var errs flagProblems
	sel := f.selection(&errs)
	enc := f.encoding(&errs)
	var tmpl []catVerb
	if f.Format != "" {
		var err error
		if tmpl, err = parseCatFormat(f.Format); err != nil {
			errs.bad("--format", "%v", err)
		}
	}
	if err := config.Join(errs...); err != nil {
		return err
	}
	f.Topics = sel.Topic
	a, err := f.open(ctx, streams)
	if err != nil {
		return err
	}
	rc := a.rc
	rc.Topics, rc.TopicsRegex, rc.KeyEncoder, rc.ValueEncoder = []string{sel.Topic}, nil, nil, nil
	r, err := restore.New(rc, a.store, a.log)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	out := bufio.NewWriterSize(streams.Out, 64<<10)
	w := &recordWriter{w: out, enc: enc, tmpl: tmpl}
	got, err := r.Records(ctx, sel, w.write)
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	stderr := stderrFor(f.configFlags, streams, a.log)
	switch {
	case !got.Indexed && sel.Scan:
		fmt.Fprintf(stderr, "kafkas3 cat: --scan: listed and scanned every object of the topic (%d opened)\n", got.Objects)
	case !got.Indexed && len(sel.Partitions) > 0:
		fmt.Fprintf(stderr, "kafkas3 cat: no archive index for partitions %v of topic %q under %s: listed and scanned every object of the topic (%d opened)\n", sel.Partitions, sel.Topic, rc.IndexPrefix, got.Objects)
	case !got.Indexed:
		fmt.Fprintf(stderr, "kafkas3 cat: no archive index for topic %q under %s: listed and scanned every object of the topic (%d opened)\n", sel.Topic, rc.IndexPrefix, got.Objects)
	}
	if got.Assumed > 0 {
		fmt.Fprintf(stderr, "kafkas3 cat: %d objects without index entry nor envelope: their records' offsets are assumed consecutive from the start offset of their names\n", got.Assumed)
	}
	if got.UntimedKept > 0 {
		fmt.Fprintf(stderr, "kafkas3 cat: %d records carry no timestamp of their own (no store.envelope): --from/--until took them by their objects' time range (index min_ts..max_ts)\n", got.UntimedKept)
	}
	if got.UntimedLeft > 0 {
		fmt.Fprintf(stderr, "kafkas3 cat: %d records carry no timestamp of their own, nor their objects in an index: --from/--until left them out\n", got.UntimedLeft)
	}
	if err != nil {
		return fmt.Errorf("cat %s: %w", a.ident, err)
	}
	if got.Matched == 0 {
		return fmt.Errorf("%w in topic %q of %s (%d objects read)", ErrNoMatch, sel.Topic, a.ident, got.Objects)
	}
	return nil
}
