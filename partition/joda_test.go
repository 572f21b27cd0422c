package partition

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// The expected paths below were printed by Joda-Time 2.15.1 itself
// (testbed.JodaOracle); TestPathFormatMatchesJodaTimeIntegration
// compares thousands more against it on the test bed.
func TestPathFormatKnownPaths(t *testing.T) {
	for _, tc := range []struct {
		pattern, zone string
		ms, duration  int64
		wantStart     int64
		want          string
	}{
		// 03:10 PDT on the day clocks jump from 02:00 to 03:00: the
		// 100-minute bucket starts at the skipped local 02:40, which
		// Joda-Time moves forward to 03:40 PDT, after the record.
		{"yyyy-MM-dd'T'HH:mm:ssZZ", "America/Los_Angeles", 1805019000000, 6000000, 1805020800000, "2027-03-14T03:40:00-07:00"},
		// 2027-01-01 is a Friday in ISO week 53 of 2026: YYYY is the
		// calendar year, xxxx the week year.
		{"YYYY/xxxx/ww/e", "UTC", 1798761600000, 3600000, 1798761600000, "2027/2026/53/5"},
		// 01:00 UTC on 2027-10-31 is 02:00 CET, just after Berlin falls back.
		{hourlyPathFormat, "Europe/Berlin", 1824944400000, 3600000, 1824944400000, "year=2027/month=10/day=31/hour=02"},
		{"G C yy MMM MMMM EEE EEEE a hh KK kk SSSS z Z ZZZ", "Europe/Berlin", 1824944400123, 1, 1824944400123,
			"AD 20 27 Oct October Sun Sunday AM 02 02 02 1230 CET +0100 Europe/Berlin"},
		{"'it''s' '' HH'h'", "UTC", 0, 3600000, 0, "it's ' 00h"},
		{dailyPathFormat, "UTC", -1, 86400000, 0, "year=1970/month=01/day=01"}, // Java's division rounds toward zero
	} {
		loc, err := time.LoadLocation(tc.zone)
		if err != nil {
			t.Fatal(err)
		}
		pf, err := ParsePathFormat(tc.pattern, "en-US")
		if err != nil {
			t.Fatalf("ParsePathFormat(%q): %v", tc.pattern, err)
		}
		start := TimeBucket(tc.ms, tc.duration, loc)
		if got := pf.Format(time.UnixMilli(start).In(loc)); start != tc.wantStart || got != tc.want {
			t.Errorf("%q in %s at %d: bucket %d path %q, want %d %q", tc.pattern, tc.zone, tc.ms, start, got, tc.wantStart, tc.want)
		}
	}
}

func TestParsePathFormatRefuses(t *testing.T) {
	for _, tc := range []struct{ pattern, locale, want string }{
		{"YYYY/qq", "en", `illegal pattern component "qq"`},
		{"'year'=YYYY/bb", "", `illegal pattern component "bb"`},
		{"zzzz", "en", `"zzzz" (the zone's long name) is not supported`},
		{"YYYY/MMM", "de", `"MMM" prints a name, and names are only printed in English`},
		{"EEEE", "fr_FR", `"EEEE" prints a name`},
	} {
		_, err := ParsePathFormat(tc.pattern, tc.locale)
		if !errors.Is(err, ErrBadPathFormat) || !contains(err.Error(), tc.want) {
			t.Errorf("ParsePathFormat(%q, %q) = %v, want ErrBadPathFormat with %q", tc.pattern, tc.locale, err, tc.want)
		}
	}
	// Numeric fields print the same in every locale.
	if _, err := ParsePathFormat(hourlyPathFormat, "de_DE"); err != nil {
		t.Errorf("hourly preset with locale de_DE: %v", err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// FuzzPathFormat: any pattern either parses or is refused, and a parsed
// one prints any instant without panicking.
func FuzzPathFormat(f *testing.F) {
	f.Add(hourlyPathFormat, int64(1805019000000), int64(3600000))
	f.Add("'a''b'''x YYYY ww e", int64(-1), int64(7))
	f.Add("GCYyxweEDMdaKhHkmsSzZ ZZ ZZZ", int64(1<<50), int64(1))
	loc, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, pattern string, ms, duration int64) {
		pf, err := ParsePathFormat(pattern, "en")
		if err != nil {
			return
		}
		if duration <= 0 || ms < -1<<50 || ms > 1<<50 {
			return
		}
		_ = pf.Format(time.UnixMilli(TimeBucket(ms, duration, loc)).In(loc))
	})
}
