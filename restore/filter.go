package restore

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/kafkas3/kafkas3/format"
)

// Filters
//
// A restore can leave records out (Config.Filter: --key-regex, --header,
// --from, and --exclude-action drop with --exclude-keys-file). The record
// stream is then the archive's stream less the records the filter leaves
// out, still a function of the archive and the flags, so what landed is
// a prefix of it and a re-run with the same flags resumes exactly. But an
// object's share of the stream is no longer its record count: a
// filtering run reads every object, the ones the target already holds
// included (no skipping whole objects by their planned counts,
// job.skipUnread), and counts the records the filter keeps (stream.take).
// The records left out are counted in the summary (Summary.Filtered).
// Follow mode and --restore-groups refuse a filter for now: their
// positions (marks, group offset translation) count the archive's
// records, not the kept ones.

// Filter selects the records a restore produces; the zero Filter keeps
// every record.
type Filter struct {
	// KeyRegex keeps the records whose whole key matches (a null key
	// never does).
	KeyRegex *regexp.Regexp
	// Header keeps the records with a header of this name, whose value
	// is HeaderValue when HeaderHasValue.
	Header         string
	HeaderValue    []byte
	HeaderHasValue bool
	// From keeps the records whose timestamp is at or after it.
	From time.Time
	// DropKeys leaves out the records whose key is one of
	// Config.ExcludeKeys (--exclude-action drop) instead of restoring
	// them as tombstones.
	DropKeys bool
}

// Active tells whether f leaves any record out.
func (f Filter) Active() bool {
	return f.KeyRegex != nil || f.Header != "" || !f.From.IsZero() || f.DropKeys
}

// String describes f for the plan ("" when inactive).
func (f Filter) String() string {
	var parts []string
	if f.KeyRegex != nil {
		parts = append(parts, fmt.Sprintf("key matches %q", f.KeyRegex.String()))
	}
	if f.Header != "" {
		h := fmt.Sprintf("header %q", f.Header)
		if f.HeaderHasValue {
			h += fmt.Sprintf(" = %q", f.HeaderValue)
		}
		parts = append(parts, h)
	}
	if !f.From.IsZero() {
		parts = append(parts, "timestamp at or after "+f.From.UTC().Format(time.RFC3339Nano))
	}
	if f.DropKeys {
		parts = append(parts, "key not in the erasure list")
	}
	return strings.Join(parts, ", ")
}

// keeps tells whether the restore produces rec (Config.Filter; the
// erasure list with DropKeys).
func (r *Restorer) keeps(rec *format.Record) bool {
	f := &r.cfg.Filter
	switch {
	case f.DropKeys && r.listed(rec.Key):
		return false
	case f.KeyRegex != nil && (rec.Key == nil || !f.KeyRegex.Match(rec.Key)):
		return false
	case !f.From.IsZero() && rec.Timestamp.Before(f.From):
		return false
	case f.Header != "" && !hasHeader(rec.Headers, f.Header, f.HeaderValue, f.HeaderHasValue):
		return false
	}
	return true
}

// hasHeader tells whether hs holds a header name (with value, when
// withValue).
func hasHeader(hs []format.Header, name string, value []byte, withValue bool) bool {
	for _, h := range hs {
		if h.Key == name && (!withValue || bytes.Equal(h.Value, value) && (h.Value == nil) == (value == nil)) {
			return true
		}
	}
	return false
}
