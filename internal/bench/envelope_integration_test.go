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
		base := meanBaseline("the bytes rows", kind[fmtBytes]...)
		e.checkAgainst(append(kind[fmtEnvJSON], kind[fmtEnvAvro]...), base, envelopeMinVsBytes)
	}
	fmt.Fprintf(os.Stderr, "bench: envelope rows done\n")
}

// checkAgainst notes each of rows' throughput against base's and fails
// the benchmark for a row under bound times it.
func (e *env) checkAgainst(rows []*row, base *baseline, bound float64) {
	for _, r := range rows {
		vs := r.rate() / base.rate
		r.note += fmt.Sprintf("; %.2f × %s' MB/s (mean %.1f MB/s)", vs, base.name, base.rate/1e6)
		if vs < bound {
			r.note += fmt.Sprintf(" **under %.2f**", bound)
			e.failures = append(e.failures, fmt.Sprintf("%s: %.2f of %s' MB/s, bound %.2f", r.name, vs, base.name, bound))
		}
	}
}
