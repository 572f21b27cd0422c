//go:build integration

package partition

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/internal/testbed"
)

func TestMain(m *testing.M) { os.Exit(testbed.Main(m)) }

// jodaCase is one case for testbed.JodaOracle.
type jodaCase struct {
	pattern, zone string
	ms, duration  int64
}

// TestPathFormatMatchesJodaTimeIntegration prints thousands of paths with
// kafkas3 and with Joda-Time itself (on the test bed's JVM, the jar from
// Maven Central; testbed.JodaOracle) and requires every bucket start and every path to be
// equal: the year boundary 2026/2027, the 2027 DST changes in
// America/Los_Angeles and Europe/Berlin (and zones with half-hour offsets
// and a half-hour DST), week years, the hourly and daily presets and
// patterns with every supported letter.
func TestPathFormatMatchesJodaTimeIntegration(t *testing.T) {
	cases := jodaCases()
	var in []string
	for _, c := range cases {
		in = append(in, fmt.Sprintf("%s\t%s\ten\t%d\t%d", c.pattern, c.zone, c.ms, c.duration))
	}
	lines := testbed.JodaOracle(t, in)
	bad := 0
	for i, c := range cases {
		wantStart, wantPath, _ := strings.Cut(lines[i], "\t")
		loc, err := time.LoadLocation(c.zone)
		if err != nil {
			t.Fatal(err)
		}
		pf, err := ParsePathFormat(c.pattern, "en")
		if err != nil {
			t.Fatalf("ParsePathFormat(%q): %v", c.pattern, err)
		}
		start := TimeBucket(c.ms, c.duration, loc)
		got := pf.Format(time.UnixMilli(start).In(loc))
		if strconv.FormatInt(start, 10) != wantStart || got != wantPath {
			bad++
			if bad <= 20 {
				t.Errorf("%s in %s at %s (%d ms), duration %d: kafkas3 %d %q, Joda-Time %s %q",
					c.pattern, c.zone, time.UnixMilli(c.ms).UTC().Format(time.RFC3339Nano), c.ms, c.duration, start, got, wantStart, wantPath)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d paths differ from Joda-Time's", bad, len(cases))
	}
	t.Logf("%d paths equal to Joda-Time %s's", len(cases), testbed.JodaTimeVersion)
}

func jodaCases() []jodaCase {
	const hour, day = int64(3600000), int64(86400000)
	patterns := []string{
		hourlyPathFormat,
		dailyPathFormat,
		"'year'=YYYY/'week'=ww/'weekyear'=xxxx",
		"YYYY-ww-xxxx/e/EEE/EEEE",
		"yyyy/D/DDD/HH:mm:ss.SSS/SSSS/S",
		"yy/YY/xx/MMM/MMMM/M/d/a/h/hh/K/k/kk/H",
		"G C y Y x YYYYY",
		"Z ZZ ZZZ",
		"'it''s' '' HH'h'",
	}
	zones := []string{"UTC", "America/Los_Angeles", "Europe/Berlin", "Asia/Kolkata", "America/St_Johns", "Australia/Lord_Howe"}
	// Durations that are no divisor of an hour put bucket starts inside the
	// hour a DST change skips, where Joda-Time's rule for such local times
	// decides the path.
	durations := []int64{hour, day, 15 * 60000, 7 * day, 30 * 60000, 60000, 6 * hour, 100 * 60000, 7 * 60000, 150 * 60000, 25 * 60000}
	var instants []int64
	at := func(s string) int64 {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			panic(err)
		}
		return tm.UnixMilli()
	}
	// Around the year boundary and the 2027 DST changes (every 10 minutes
	// for 4 hours either side).
	for _, s := range []string{"2026-12-31T23:30:00Z", "2027-01-01T00:30:00Z",
		"2027-03-14T10:00:00Z", "2027-11-07T09:00:00Z", // America/Los_Angeles
		"2027-03-28T01:00:00Z", "2027-10-31T01:00:00Z", // Europe/Berlin
		"2027-04-04T15:00:00Z", "2027-10-02T15:30:00Z", // Australia/Lord_Howe
		"2027-03-14T05:30:00Z", "2027-11-07T04:30:00Z", // America/St_Johns
	} {
		c := at(s)
		for d := int64(-24); d <= 24; d++ {
			instants = append(instants, c+d*600000)
		}
	}
	// Week years: the days around New Year of years whose week 1 starts early or late.
	for _, y := range []int{2020, 2021, 2026, 2027, 2032, 2037} {
		for d := -4; d <= 4; d++ {
			instants = append(instants, time.Date(y, 1, 1, 12, 0, 0, 0, time.UTC).AddDate(0, 0, d).UnixMilli())
		}
	}
	rng := rand.New(rand.NewPCG(11, 2027))
	for range 200 {
		instants = append(instants, rng.Int64N(at("2100-01-01T00:00:00Z")))
	}
	var cases []jodaCase
	for _, ms := range instants {
		for _, z := range zones {
			cases = append(cases, jodaCase{patterns[rng.IntN(len(patterns))], z, ms, durations[rng.IntN(len(durations))]})
			cases = append(cases, jodaCase{hourlyPathFormat, z, ms, hour})
		}
	}
	// Zone short names (z) are printed from the tz database's abbreviations;
	// they are compared for the zones whose names Java shares.
	for _, ms := range instants {
		for _, z := range []string{"UTC", "America/Los_Angeles", "Europe/Berlin"} {
			cases = append(cases, jodaCase{"z/HH", z, ms, hour})
		}
	}
	return cases
}
