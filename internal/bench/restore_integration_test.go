//go:build integration

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/config"
	"github.com/kafkas3/kafkas3/restore"
)

// allRestoreFormats are the archives the restore rows restore: the main
// sink runs' bytes, JSON+gzip and JSON+zstd archives, and the Avro topic's
// Avro (null codec) and Parquet (snappy) archives.
var allRestoreFormats = []string{fmtBytes, fmtJSONGzip, fmtJSONZstd, fmtAvro, fmtParquet}

// restoreFormatsEnv chooses some of allRestoreFormats (comma-separated).
const restoreFormatsEnv = "KAFKAS3_BENCH_RESTORE_FORMATS"

// restoreProofsEnv=1 adds the proof rows (source --dry-run) to the
// restore rounds.
const restoreProofsEnv = "KAFKAS3_BENCH_RESTORE_PROOFS"

// restoreFormats returns the formats KAFKAS3_BENCH_RESTORE_FORMATS names,
// all of allRestoreFormats when it is unset.
func restoreFormats(b *testing.B) []string {
	s := os.Getenv(restoreFormatsEnv)
	if s == "" {
		return allRestoreFormats
	}
	var out []string
	for _, f := range strings.Split(s, ",") {
		if !slices.Contains(allRestoreFormats, f) {
			b.Fatalf("%s=%q: %q is not one of %s", restoreFormatsEnv, s, f, strings.Join(allRestoreFormats, ", "))
		}
		out = append(out, f)
	}
	return out
}

// restoreSets maps each of allRestoreFormats to the data set its archive
// holds: main for bytes, JSON+gzip and JSON+zstd, typed for Avro and
// Parquet.
func restoreSets(main, typed dataset) map[string]dataset {
	return map[string]dataset{fmtBytes: main, fmtJSONGzip: main, fmtJSONZstd: main, fmtAvro: typed, fmtParquet: typed}
}

// restoreMinVsProducer is issue 20 item 6: a restore's throughput at
// least this share of the bare idempotent producer's, by format.
var restoreMinVsProducer = map[string]float64{fmtBytes: 0.9, fmtJSONGzip: 0.7, fmtJSONZstd: 0.85}

// restoreMaxRSSMiB bounds every restore row's peak RSS (issue 19 item 5,
// issue 20 item 6).
const restoreMaxRSSMiB = 256

// checkRestores records a failure for each restore row under its
// format's bound against the producer (restoreMinVsProducer) or over
// restoreMaxRSSMiB.
func (e *env) checkRestores(restores map[string][]*row, prod *baseline) {
	for f, rows := range restores {
		for _, r := range rows {
			if bound, ok := restoreMinVsProducer[f]; ok && r.rate()/prod.rate < bound {
				e.failures = append(e.failures, fmt.Sprintf("%s: %.2f of %s' MB/s, bound %.2f", r.name, r.rate()/prod.rate, prod.name, bound))
			}
			if mib := float64(r.rssKiB) / 1024; mib > restoreMaxRSSMiB {
				e.failures = append(e.failures, fmt.Sprintf("%s: peak RSS %.1f MiB, bound %d MiB", r.name, mib, restoreMaxRSSMiB))
			}
		}
	}
}

// restoreRows measures `kafkas3 source` of the archives of sets (main's
// and the Avro topic's, restoreSets) against a bare franz-go idempotent
// producer writing main's records: rounds times a
// producer baseline followed by, for each archive, its proof alone
// (`kafkas3 source --dry-run`, which reads and checks every object and
// produces nothing) and one restore, then a last baseline, so every
// restore runs between two baselines. Each restore and proof row gets its
// throughput and CPU seconds per GB as ratios to the mean of all the
// baselines. With KAFKAS3_BENCH_RESTORE_BIN (another kafkas3 binary, e.g.
// main's) each restore is followed by the same restore with that binary,
// for a side-by-side comparison under the same load. The facts then give,
// per archive, the proof's seconds against the producer's and the best
// ratio a restore that proves before it produces can reach (restoreFloor).
func (e *env) restoreRows(main dataset, sets map[string]dataset, rounds int) {
	other := os.Getenv(restoreBinEnv)
	formats := restoreFormats(e.b)
	withProofs := os.Getenv(restoreProofsEnv) == "1"
	var bases, compared []*row
	proofs, restores := map[string][]*row{}, map[string][]*row{}
	for i := 1; i <= rounds+1; i++ {
		name := fmt.Sprintf("baseline: franz-go idempotent producer (%d of %d)", i, rounds+1)
		bases = append(bases, e.produceRow(name, withTopic(main, fmt.Sprintf("baseline_%d", i)), "new"))
		if i > rounds {
			break
		}
		for _, f := range formats {
			d := sets[f]
			tag := strings.NewReplacer("+", "_").Replace(f)
			if withProofs {
				proofs[f] = append(proofs[f], e.proofRow(fmt.Sprintf("proof alone: source --dry-run %s archive (%d of %d)", f, i, rounds), d, f))
			}
			rename := fmt.Sprintf("copy%d_%s_of_$0", i, tag)
			name := fmt.Sprintf("source %s archive → %s", f, strings.ReplaceAll(rename, "$0", d.Topic))
			restores[f] = append(restores[f], e.restoreRow(name, d, f, rename, e.bin))
			if other != "" {
				rename := fmt.Sprintf("other%d_%s_of_$0", i, tag)
				name := fmt.Sprintf("source %s archive, %s binary → %s", f, restoreBinEnv, strings.ReplaceAll(rename, "$0", d.Topic))
				compared = append(compared, e.restoreRow(name, d, f, rename, other))
			}
		}
	}
	prod := meanBaseline("idempotent producer (mean)", bases...)
	for _, rows := range [][]*row{compared, flat(proofs, formats), flat(restores, formats)} {
		for _, r := range rows {
			r.setRatio(prod.rate, prod.name)
			r.limit = prod
		}
	}
	for _, f := range formats {
		if withProofs {
			e.facts.add("restore floor, "+f, restoreFloor(prod, proofs[f], restores[f]))
		}
	}
	e.checkRestores(restores, prod)
}

// restoreBinEnv names another kafkas3 binary whose restores run next to
// this tree's (restoreRows).
const restoreBinEnv = "KAFKAS3_BENCH_RESTORE_BIN"

// restoreRoundsEnv sets the rounds of KAFKAS3_BENCH_ONLY=restore (default 2).
const restoreRoundsEnv = "KAFKAS3_BENCH_RESTORE_ROUNDS"

// restoreRounds is KAFKAS3_BENCH_RESTORE_ROUNDS, 2 when unset.
func restoreRounds(b *testing.B) int {
	s := os.Getenv(restoreRoundsEnv)
	if s == "" {
		return 2
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a number of rounds, at least 1", restoreRoundsEnv, s)
	}
	return n
}

// flat returns the rows of m, in the order of formats.
func flat(m map[string][]*row, formats []string) []*row {
	var out []*row
	for _, f := range formats {
		out = append(out, m[f]...)
	}
	return out
}

// restoreFloor says what the proof costs against production: a restore
// proves every object before it produces the first record, so its wall
// time is at least the proof's plus the production's. With production
// taking the producer baseline's time, the best ratio to the producer a
// restore can reach is produce/(proof+produce) = 1/(1+proof/produce).
// It is an estimate, not a bound: a restore's production can run faster
// than the producer baseline (which makes and allocates every value).
//
// The producer's time is the data set's bytes at the producer runs' mean
// MB/s (as the ratio columns use it), the proof's the mean wall time of
// its runs.
func restoreFloor(prod *baseline, proofs, restores []*row) string {
	if len(proofs) == 0 || len(restores) == 0 {
		return "no runs"
	}
	proof, produce := meanWall(proofs), float64(restores[0].bytes)/prod.rate
	ratios := make([]string, len(restores))
	for i, r := range restores {
		ratios[i] = fmt.Sprintf("%.2f", r.rate()/prod.rate)
	}
	var own float64 // the restores' own proofs (which also copy the records they keep)
	for _, r := range restores {
		own += r.proof.Seconds() / float64(len(restores))
	}
	return fmt.Sprintf("proof alone (source --dry-run) %.2f s (mean of %d), producer %.2f s (at its mean MB/s): proof/produce %.2f, "+
		"so a restore that proves first and then produces at the producer's speed reaches 1/(1+%.2f) = %.2f × the producer "+
		"(with the restores' own proofs, %.2f s: %.2f); measured %s ×",
		proof, len(proofs), produce, proof/produce, proof/produce, 1/(1+proof/produce), own, 1/(1+own/produce), strings.Join(ratios, ", "))
}

// meanWall is the mean wall time of rows in seconds.
func meanWall(rows []*row) float64 {
	var s float64
	for _, r := range rows {
		s += r.wall.Seconds() / float64(len(rows))
	}
	return s
}

// proofRow runs `kafkas3 source --dry-run` of the main sink run's archive
// of d in format f with the restore's config: the listing, the index and
// the proof (every object read and checked), nothing produced.
func (e *env) proofRow(name string, d dataset, f string) *row {
	bucket, ok := e.archives[f]
	if !ok {
		e.b.Fatalf("%s: no %s archive of %s to prove", name, f, d.Topic)
	}
	cfg := e.config(fmt.Sprintf("proof-%d", len(e.rows)), d, bucket, f, nil)
	pr := e.run(name, exec.Command(e.bin, "source", "--config", cfg, "--topic-rename", "proof_$0", "--create-topics", "--dry-run", "--log-format", "json"))
	if !bytes.Contains(pr.stdout, []byte("dry run: nothing produced")) {
		e.b.Fatalf("%s: no dry run: %s", name, pr.stdout)
	}
	return e.add(&row{name: name, kind: kindProof, records: d.Records, bytes: d.Bytes(), wall: pr.wall, rssKiB: pr.rssKiB, cpu: pr.cpu,
		note: "kafkas3 source --dry-run subprocess: what a restore does before its first record; " + phasesNote(pr)})
}

// restoreArchives writes the archives the restore rows need (KAFKAS3_BENCH_ONLY=restore):
// the Avro topic, loaded with as many bytes as main (avroSet), and `kafkas3
// sink --once` of each restore format's data set, measured like the other
// sink rows but not profiled. It returns the restore's data sets.
func (e *env) restoreArchives(main dataset) map[string]dataset {
	formats := restoreFormats(e.b)
	typed := dataset{}
	if slices.Contains(formats, fmtAvro) || slices.Contains(formats, fmtParquet) {
		typed = e.avroSet(main.Bytes())
	}
	sets := restoreSets(main, typed)
	for _, f := range formats {
		if _, ok := e.archives[f]; !ok {
			e.sinkRow("sink "+f+" --once (the archive to restore)", sets[f], f, mainFlushSize, 0, false)
		}
	}
	return sets
}

// restoreRow restores the main sink run's archive of d in format f into
// the topic that rename names with `kafkas3 source --create-topics` of the
// binary bin, and checks the target's end offsets. With
// KAFKAS3_BENCH_PROFILE a restore of this tree's binary is repeated,
// unmeasured, under the profiler (profileRestore).
func (e *env) restoreRow(name string, d dataset, f, rename, bin string) *row {
	bucket, ok := e.archives[f]
	if !ok {
		e.b.Fatalf("%s: no %s archive of %s to restore", name, f, d.Topic)
	}
	target := strings.ReplaceAll(rename, "$0", d.Topic)
	cfg := e.config(fmt.Sprintf("restore-%d", len(e.rows)), d, bucket, f, nil)
	pr := e.run(name, exec.Command(bin, "source", "--config", cfg, "--topic-rename", rename, "--create-topics", "--log-format", "json"))
	e.checkEndOffsets(name, target, d.Records)
	phases, proof := restorePhases(pr)
	fmt.Fprintf(os.Stderr, "bench: %s: %s\n", name, phases)
	if bin == e.bin {
		e.profileRestore(name, d, cfg, "profile_"+rename)
	}
	return e.add(&row{name: name, kind: kindRestore, records: d.Records, bytes: d.Bytes(), wall: pr.wall, rssKiB: pr.rssKiB, cpu: pr.cpu,
		note: "kafkas3 source subprocess; " + phases, proof: proof})
}

// modeRestoreProfile runs the restore in process with profiles.
const modeRestoreProfile = "restore-profile"

// restoreProfileArgs are the extra inputs of modeRestoreProfile.
type restoreProfileArgs struct {
	Config  string `json:"config"`  // the config file of the measured run
	Rename  string `json:"rename"`  // --topic-rename
	Profile string `json:"profile"` // path prefix of the profile files
}

// profileRestore repeats a restore in a profiled child process into another
// new topic, when KAFKAS3_BENCH_PROFILE is set; the profiles are
// <dir>/<run>.cpu.pprof and <dir>/<run>.heap.pprof.
func (e *env) profileRestore(name string, d dataset, cfg, rename string) {
	dir := os.Getenv(profileEnv)
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.b.Fatal(err)
	}
	prefix := filepath.Join(dir, profileFile(name))
	_, res := e.child("profile: "+name, modeRestoreProfile, childArgs{Data: d,
		RestoreProfile: &restoreProfileArgs{Config: cfg, Rename: rename, Profile: prefix}})
	if res.Records != d.Records {
		e.b.Fatalf("profile: %s: restored %d records, want %d", name, res.Records, d.Records)
	}
	e.checkEndOffsets("profile: "+name, strings.ReplaceAll(rename, "$0", d.Topic), d.Records)
	fmt.Fprintf(os.Stderr, "bench: profiles %s.{cpu,heap}.pprof (peak live heap %.1f MiB)\n", prefix, float64(res.Bytes)/(1<<20))
}

// profileFile turns a row name into a file name.
func profileFile(name string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, strings.ToLower(name))
}

// restoreInProcess restores like `kafkas3 source --config FILE
// --topic-rename RENAME --create-topics`, with the restore config built
// from the file by package config as the command builds it (reading each
// object once, with its prefetch), under the CPU profiler; it writes the
// heap profile at the highest live heap seen. It runs without the
// command's soft memory limit (memlimit).
func restoreInProcess(ctx context.Context, a childArgs, stderr io.Writer) (childResult, error) {
	p := a.RestoreProfile
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	settings, err := config.Load(config.Input{Command: config.Source, ConfigFile: p.Config})
	if err != nil {
		return childResult{}, err
	}
	sc, err := settings.Source(log)
	if err != nil {
		return childResult{}, err
	}
	store, ident, err := sc.Store.Open(ctx, log)
	if err != nil {
		return childResult{}, err
	}
	cfg := sc.Restore
	cfg.Topics = cfg.ArchiveTopics
	cfg.RenameRegex, cfg.Rename = regexp.MustCompile(`.*`), p.Rename
	cfg.CreateTopics = true
	// As kafkas3 source sets them (cmd/source_flags.go) without --prove-first.
	cfg.ReadOnce, cfg.PrefetchBytes = true, restore.DefaultPrefetchBytes
	cfg.Identity = ident + "/" + cfg.Keys.TopicsDir
	r, err := restore.New(cfg, store, log)
	if err != nil {
		return childResult{}, err
	}
	cpu, err := os.Create(p.Profile + ".cpu.pprof")
	if err != nil {
		return childResult{}, err
	}
	defer cpu.Close()
	if err := pprof.StartCPUProfile(cpu); err != nil {
		return childResult{}, err
	}
	stopHeap := watchHeap(p.Profile + ".heap.pprof")
	sum, err := r.Run(ctx, nil)
	pprof.StopCPUProfile()
	peak := stopHeap()
	fmt.Fprintf(stderr, "profile: peak live heap %.1f MiB\n", float64(peak)/(1<<20))
	if err != nil {
		return childResult{}, err
	}
	if sum.Records == 0 {
		return childResult{}, errors.New("restored no records")
	}
	return childResult{Records: sum.Records, Bytes: int64(peak)}, nil
}

// restorePhases says, from the JSON log of a `kafkas3 source` run, when
// (seconds after the process started) its proof began and ended, and how
// long it ran after the proof (targets, markers, production); it also
// returns how long the proof took (0 when the log does not say).
func restorePhases(pr procResult) (string, time.Duration) {
	b, err := os.ReadFile(pr.log)
	if err != nil {
		return "phases: " + err.Error(), 0
	}
	var began, checked time.Time
	for _, line := range bytes.Split(b, []byte("\n")) {
		var l struct {
			Time time.Time `json:"time"`
			Msg  string    `json:"msg"`
		}
		if json.Unmarshal(line, &l) != nil {
			continue
		}
		switch {
		case strings.HasPrefix(l.Msg, "checking the archive"):
			began = l.Time
		case l.Msg == "archive checked":
			checked = l.Time
		}
	}
	if began.IsZero() || checked.IsZero() {
		return "phases: no proof lines in the log", 0
	}
	end := pr.start.Add(pr.wall)
	return fmt.Sprintf("proof from %.2f s to %.2f s (%.2f s), then %.2f s to the exit",
		began.Sub(pr.start).Seconds(), checked.Sub(pr.start).Seconds(), checked.Sub(began).Seconds(), end.Sub(checked).Seconds()), checked.Sub(began)
}

// phasesNote is restorePhases' text.
func phasesNote(pr procResult) string {
	s, _ := restorePhases(pr)
	return s
}
