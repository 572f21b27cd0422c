package partition

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ErrBadPathFormat is wrapped by ParsePathFormat for a pattern Joda-Time
// would refuse, or one kafkas3 cannot print the way Joda-Time does.
var ErrBadPathFormat = errors.New("bad path.format")

// PathFormat is a parsed path.format: a Joda-Time DateTimeFormat pattern,
// printed the way Confluent's TimeBasedPartitioner prints it
// (DateTimeFormat.forPattern(path.format).withZone(timezone), with the
// locale). It is immutable and safe for concurrent use.
//
// The pattern letters are Joda's, not java.time's: YYYY (year of era) and
// yyyy (year) are the calendar year, never the week-based year; xxxx is
// the ISO week-based year and ww the ISO week. Numeric fields are padded
// with zeros to the number of letters (yy, xx and YY print the last two
// digits of the year); text between single quotes is literal, and two single quotes are a
// quote. Supported letters:
//
//	G era (AD)            C century of era       Y year of era    y year
//	x week-based year     w week of week year    e day of week (1 = Monday)
//	E day of week name    D day of year          M month (MMM/MMMM: name)
//	d day of month        a AM/PM                K hour of AM/PM (0-11)
//	h clock hour of AM/PM (1-12)                 H hour of day (0-23)
//	k clock hour of day (1-24)                   m minute    s second
//	S fraction of second  z zone short name      Z offset (Z: +0100, ZZ: +01:00, ZZZ: zone id)
//
// Names (G, E, MMM, a) are printed in English; a locale other than English
// is refused for patterns that use them, since its names would differ from
// Joda's. Numeric fields do not depend on the locale. zzzz (the zone's long
// name) is refused: Go has no source for Java's zone names.
type PathFormat struct {
	pattern string
	fields  []jodaField
}

// jodaField is one token of a pattern: a literal, or a letter repeated n
// times.
type jodaField struct {
	letter  byte // 0 for a literal
	n       int
	literal string
}

// ParsePathFormat parses pattern with locale (Confluent's locale key, e.g.
// "en", "en-US" or "en_US"; empty counts as English). A trailing "/" is
// not stripped here: TimeBased does that, as Confluent does, for its
// directory.delim.
func ParsePathFormat(pattern, locale string) (*PathFormat, error) {
	fields, err := tokenizeJoda(pattern)
	if err != nil {
		return nil, err
	}
	english := locale == "" || strings.EqualFold(locale, "en") ||
		strings.HasPrefix(strings.ToLower(locale), "en-") || strings.HasPrefix(strings.ToLower(locale), "en_")
	for _, f := range fields {
		if f.letter == 0 {
			continue
		}
		token := strings.Repeat(string(f.letter), f.n)
		if !strings.ContainsRune(jodaLetters, rune(f.letter)) {
			return nil, fmt.Errorf("%w: %q: illegal pattern component %q (Joda-Time refuses it)", ErrBadPathFormat, pattern, token)
		}
		if f.letter == 'z' && f.n >= 4 {
			return nil, fmt.Errorf("%w: %q: %q (the zone's long name) is not supported; use z, Z, ZZ or ZZZ", ErrBadPathFormat, pattern, token)
		}
		if !english && isTextField(f) {
			return nil, fmt.Errorf("%w: %q: %q prints a name, and names are only printed in English; use locale en (or a numeric field)", ErrBadPathFormat, pattern, token)
		}
	}
	return &PathFormat{pattern: pattern, fields: fields}, nil
}

// jodaLetters are the pattern letters Joda-Time's DateTimeFormat accepts.
const jodaLetters = "GCYyxweEDMdaKhHkmsSzZ"

func isTextField(f jodaField) bool {
	switch f.letter {
	case 'G', 'E', 'a':
		return true
	case 'M':
		return f.n >= 3
	}
	return false
}

// tokenizeJoda splits a pattern as Joda-Time does: runs of one ASCII
// letter, quoted text (two single quotes, inside or outside quotes, are one quote), and runs
// of other characters, which are literal.
func tokenizeJoda(pattern string) ([]jodaField, error) {
	var fields []jodaField
	addLiteral := func(s string) {
		if n := len(fields); n > 0 && fields[n-1].letter == 0 {
			fields[n-1].literal += s
			return
		}
		fields = append(fields, jodaField{literal: s})
	}
	for i := 0; i < len(pattern); {
		c := pattern[i]
		switch {
		case isASCIILetter(c):
			j := i
			for j < len(pattern) && pattern[j] == c {
				j++
			}
			fields = append(fields, jodaField{letter: c, n: j - i})
			i = j
		case c == '\'':
			text, next, err := quotedJoda(pattern, i)
			if err != nil {
				return nil, err
			}
			addLiteral(text)
			i = next
		default:
			j := i
			for j < len(pattern) && !isASCIILetter(pattern[j]) && pattern[j] != '\'' {
				j++
			}
			addLiteral(pattern[i:j])
			i = j
		}
	}
	return fields, nil
}

// quotedJoda reads the quoted text that starts at pattern[i] (a quote) and
// returns it with the index after its closing quote.
func quotedJoda(pattern string, i int) (string, int, error) {
	if i+1 < len(pattern) && pattern[i+1] == '\'' {
		return "'", i + 2, nil
	}
	var b strings.Builder
	for j := i + 1; j < len(pattern); j++ {
		if pattern[j] != '\'' {
			b.WriteByte(pattern[j])
			continue
		}
		if j+1 < len(pattern) && pattern[j+1] == '\'' {
			b.WriteByte('\'')
			j++
			continue
		}
		return b.String(), j + 1, nil
	}
	// Joda-Time takes an unterminated quote as text to the end.
	return b.String(), len(pattern), nil
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// String returns the pattern.
func (p *PathFormat) String() string { return p.pattern }

// Format prints t (in its own location) with the pattern.
func (p *PathFormat) Format(t time.Time) string {
	var b strings.Builder
	for _, f := range p.fields {
		if f.letter == 0 {
			b.WriteString(f.literal)
			continue
		}
		appendJodaField(&b, f, t)
	}
	return b.String()
}

func appendJodaField(b *strings.Builder, f jodaField, t time.Time) {
	year := t.Year()
	switch f.letter {
	case 'G':
		b.WriteString(pick(year > 0, "AD", "BC"))
	case 'C':
		pad(b, yearOfEra(year)/100, f.n)
	case 'Y':
		yearField(b, yearOfEra(year), f.n)
	case 'y':
		yearField(b, year, f.n)
	case 'x':
		wy, _ := t.ISOWeek()
		yearField(b, wy, f.n)
	case 'w':
		_, w := t.ISOWeek()
		pad(b, w, f.n)
	case 'e':
		pad(b, isoWeekday(t), f.n)
	case 'E':
		name := t.Weekday().String()
		if f.n < 4 {
			name = name[:3]
		}
		b.WriteString(name)
	case 'D':
		pad(b, t.YearDay(), f.n)
	case 'M':
		monthField(b, t.Month(), f.n)
	case 'd':
		pad(b, t.Day(), f.n)
	default:
		appendJodaTimeField(b, f, t)
	}
}

// appendJodaTimeField prints the fields of the time of day and the zone.
func appendJodaTimeField(b *strings.Builder, f jodaField, t time.Time) {
	h := t.Hour()
	switch f.letter {
	case 'a':
		b.WriteString(pick(h < 12, "AM", "PM"))
	case 'K':
		pad(b, h%12, f.n)
	case 'h':
		pad(b, (h+11)%12+1, f.n)
	case 'H':
		pad(b, h, f.n)
	case 'k':
		pad(b, (h+23)%24+1, f.n)
	case 'm':
		pad(b, t.Minute(), f.n)
	case 's':
		pad(b, t.Second(), f.n)
	case 'S':
		fraction(b, t.Nanosecond()/int(time.Millisecond), f.n)
	case 'z':
		name, _ := t.Zone()
		b.WriteString(name)
	case 'Z':
		zoneOffset(b, t, f.n)
	}
}

func pick(cond bool, yes, no string) string {
	if cond {
		return yes
	}
	return no
}

func yearOfEra(year int) int {
	if year <= 0 {
		return 1 - year
	}
	return year
}

// isoWeekday is Joda's dayOfWeek: 1 for Monday to 7 for Sunday.
func isoWeekday(t time.Time) int {
	if d := int(t.Weekday()); d != 0 {
		return d
	}
	return 7
}

// yearField prints a year as Joda does: two letters give its last two
// digits, more letters are the minimum width.
func yearField(b *strings.Builder, year, n int) {
	if n == 2 {
		y := year % 100
		if y < 0 {
			y = -y
		}
		pad(b, y, 2)
		return
	}
	pad(b, year, n)
}

func monthField(b *strings.Builder, m time.Month, n int) {
	switch {
	case n >= 4:
		b.WriteString(m.String())
	case n == 3:
		b.WriteString(m.String()[:3])
	default:
		pad(b, int(m), n)
	}
}

// pad prints v with at least n digits, zero-padded, a minus sign before
// the digits of a negative v (as Joda-Time's padded numbers).
func pad(b *strings.Builder, v, n int) {
	if v < 0 {
		b.WriteByte('-')
		if v == math.MinInt {
			b.WriteString(strconv.Itoa(v)[1:])
			return
		}
		v = -v
	}
	s := strconv.Itoa(v)
	for i := len(s); i < n; i++ {
		b.WriteByte('0')
	}
	b.WriteString(s)
}

// fraction prints the first n digits of the fraction of a second whose
// milliseconds are ms (Joda-Time's precision), zeros after the third.
func fraction(b *strings.Builder, ms, n int) {
	s := fmt.Sprintf("%03d", ms)
	if n <= 3 {
		b.WriteString(s[:n])
		return
	}
	b.WriteString(s)
	b.WriteString(strings.Repeat("0", n-3))
}

// zoneOffset prints the offset as Joda-Time's Z (+0100), ZZ (+01:00) or
// ZZZ (the zone id). A zero offset prints +0000 / +00:00.
func zoneOffset(b *strings.Builder, t time.Time, n int) {
	if n >= 3 {
		b.WriteString(t.Location().String())
		return
	}
	_, off := t.Zone()
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	b.WriteByte(sign)
	pad(b, off/3600, 2)
	if n == 2 {
		b.WriteByte(':')
	}
	pad(b, off/60%60, 2)
	if s := off % 60; s != 0 { // Joda prints seconds only when there are some
		if n == 2 {
			b.WriteByte(':')
		}
		pad(b, s, 2)
	}
}

// TimeBucket returns the start of the bucket of partition.duration.ms
// durationMs that the instant ms (milliseconds since the epoch) falls in,
// in loc, as Confluent's TimeBasedPartitioner computes it: the local time
// of ms, truncated to a multiple of durationMs (Java's integer division,
// which rounds toward zero), converted back to an instant with Joda-Time's
// non-strict rule for local times that a DST change skips or repeats.
func TimeBucket(ms, durationMs int64, loc *time.Location) int64 {
	local := ms + offsetMs(ms, loc)
	bucket := (local / durationMs) * durationMs
	return localToUTC(bucket, loc)
}

// offsetMs is the zone offset of loc at the instant ms, in milliseconds.
func offsetMs(ms int64, loc *time.Location) int64 {
	_, off := time.UnixMilli(ms).In(loc).Zone()
	return int64(off) * 1000
}

// localToUTC converts a local time (milliseconds, as if UTC) to an
// instant as Joda-Time's DateTimeZone.convertLocalToUTC(local, false):
// in a gap (spring forward) the time moves forward by the gap; in an
// overlap (fall back) the earlier instant is taken, except west of
// Greenwich, where the second guess is checked against the next
// transition the way Joda-Time does.
func localToUTC(local int64, loc *time.Location) int64 {
	offLocal := offsetMs(local, loc)
	off := offsetMs(local-offLocal, loc)
	if offLocal != off && offLocal < 0 {
		if nextTransition(local-offLocal, loc) != nextTransition(local-off, loc) {
			off = offLocal
		}
	}
	return local - off
}

// nextTransition is the instant of the first zone change after ms, or
// math.MaxInt64 when there is none.
func nextTransition(ms int64, loc *time.Location) int64 {
	_, end := time.UnixMilli(ms).In(loc).ZoneBounds()
	if end.IsZero() {
		return math.MaxInt64
	}
	return end.UnixMilli()
}

// The path.format of Confluent's DailyPartitioner and HourlyPartitioner.
const (
	dailyPathFormat  = "'year'=YYYY/'month'=MM/'day'=dd"
	hourlyPathFormat = "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH"
)
