//go:build integration

package bench

import (
	"fmt"
	"os"
	"strings"
)

// The lossless envelope against bytes (issue 20 item 5): KAFKAS3_BENCH_ONLY=envelope
// loads the main data set, then, in rounds, sinks it as bytes, as JSON
// envelopes and as Avro envelopes, and restores each archive: every
// envelope row's throughput is compared with the mean of the bytes rows of
// the same kind (sink or restore) of the same run.

// Envelope formats of the bench.
const (
	fmtEnvJSON = "envelope json"
	fmtEnvAvro = "envelope avro"
)

// envelopeMinVsBytes is issue 20's bound on an envelope row: at least 0.8
// of the bytes rows' throughput.
const envelopeMinVsBytes = 0.8

// envelopeConfig is the config of an envelope format.
func envelopeConfig(f string) map[string]string {
	switch f {
	case fmtEnvJSON:
		return map[string]string{"format.class": "json", "store.envelope": "true"}
	case fmtEnvAvro:
		return map[string]string{"format.class": "avro", "store.envelope": "true", "avro.codec": "null"}
	}
	return nil
}

// envelopeRows runs the envelope rows (KAFKAS3_BENCH_ONLY=envelope), rounds
// times each, sinks then restores.
func (e *env) envelopeRows(main dataset, rounds int) {
	e.restoreOnly = true // no profiled child runs
	formats := []string{fmtBytes, fmtEnvJSON, fmtEnvAvro}
	sinks, restores := map[string][]*row{}, map[string][]*row{}
	for i := 1; i <= rounds; i++ {
		for _, f := range formats {
			// Each round writes a fresh archive; the restore reads the
			// first (e.archives keeps the first bucket of a format).
			r := e.sinkRow(fmt.Sprintf("sink %s --once (%d of %d)", f, i, rounds), main, f, mainFlushSize, 0, false)
			sinks[f] = append(sinks[f], r)
		}
	}
	for i := 1; i <= rounds; i++ {
		for _, f := range formats {
			name := fmt.Sprintf("restore %s (%d of %d)", f, i, rounds)
			restores[f] = append(restores[f], e.restoreRow(name, main, f, fmt.Sprintf("env%d_%s_$0", i, strings.ReplaceAll(f, " ", "_")), e.bin))
		}
	}
	for _, kind := range []map[string][]*row{sinks, restores} {
		base := meanRate(kind[fmtBytes])
		for _, f := range []string{fmtEnvJSON, fmtEnvAvro} {
			for _, r := range kind[f] {
				vs := r.rate() / base
				r.note += fmt.Sprintf("; %.2f × the bytes rows' MB/s (mean %.1f MB/s)", vs, base/1e6)
				if vs < envelopeMinVsBytes {
					r.note += fmt.Sprintf(" **under %.1f**", envelopeMinVsBytes)
					e.failures = append(e.failures, fmt.Sprintf("%s: %.2f of the bytes rows' MB/s, bound %.1f", r.name, vs, envelopeMinVsBytes))
				}
			}
		}
	}
	fmt.Fprintf(os.Stderr, "bench: envelope rows done\n")
}

// meanRate is the mean throughput of rows.
func meanRate(rows []*row) float64 {
	var s float64
	for _, r := range rows {
		s += r.rate()
	}
	return s / float64(len(rows))
}
