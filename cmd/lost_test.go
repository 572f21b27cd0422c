package cmd

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/verify"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// lostArchive is issue 18's reten scenario through the commands: 20
// records archived by `sink --once` (flush.size 10), 80 more produced, the
// log start moved to 60 (DeleteRecords), groups committed at 30 (in the
// lost range) and 70, then `sink --once` again. It returns the brokers,
// the config file, the second sink run and the values of partition 0 by
// offset.
func lostArchive(t *testing.T, ctx context.Context, extra string) (brokers, cfg string, r cliResult, values []string) {
	t.Helper()
	brokers = startKafka(t, 1, "reten")
	values = produceJSON(t, ctx, brokers, "reten", 1, 20)[0]
	cfg = writeFile(t, "reten.yaml", sinkYAML(brokers, t.TempDir(), "reten", 10)+extra)
	mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
	values = append(values, produceJSON(t, ctx, brokers, "reten", 1, 80)[0]...)

	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var del kadm.Offsets
	del.Add(kadm.Offset{Topic: "reten", Partition: 0, At: 60})
	if res, err := adm.DeleteRecords(ctx, del); err != nil || res.Error() != nil {
		t.Fatalf("delete records: %v %v", err, res.Error())
	}
	for g, at := range map[string]int64{"app-lag": 30, "app-after": 70} {
		var o kadm.Offsets
		o.Add(kadm.Offset{Topic: "reten", Partition: 0, At: at, LeaderEpoch: -1})
		if err := adm.CommitAllOffsets(ctx, g, o); err != nil {
			t.Fatal(err)
		}
	}
	r = mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
	return brokers, cfg, r, values
}

// TestLostCmdSinkVerifySource: the sink's summary says lost=40 and its
// log warns naming reten[0] offsets 20-59; verify exits 1 naming the
// range, 0 with --accept-lost (listing it as accepted), in text and JSON;
// the restore's dry run lists the range without calling it a gap, the
// restore brings back every other record and counts lost=40, and group
// offsets translate across the range. In JSON and envelope formats.
func TestLostCmdSinkVerifySource(t *testing.T) {
	for name, extra := range map[string]string{"json": "", "envelope": "store.envelope: true\n"} {
		t.Run(name, func(t *testing.T) {
			ctx := cliContext(t)
			brokers, cfg, r, values := lostArchive(t, ctx, extra)
			if !strings.Contains(r.out, " skipped=0 lost=40 index_objects=") ||
				!strings.Contains(r.err, "reten[0] lost offsets 20-59 (40)") || !strings.Contains(r.err, "40 records were lost before archiving") {
				t.Fatalf("sink:\nstdout %s\nstderr %s", r.out, r.err)
			}
			checkLostVerify(t, ctx, cfg)

			args := []string{"source", "-c", cfg, "--topic-rename", "copy_of_$0", "--create-topics", "--restore-groups", "--group-rename", "app-(.*)=dr-$1"}
			r = mustRun(t, ctx, ExitOK, append(args, "--dry-run")...)
			for _, want := range []string{"lost before archiving: reten/0 offsets 20-59 (40)", "yes: archive index",
				"records: 60 to restore, 0 duplicates, 0 gaps, 0 damaged objects; 40 offsets lost before archiving", "30 -> 20", "70 -> 30"} {
				if !strings.Contains(r.out, want) {
					t.Errorf("dry run lacks %q:\n%s", want, r.out)
				}
			}
			r = mustRun(t, ctx, ExitOK, args...)
			if !strings.Contains(r.out, " records=60 ") || !strings.Contains(r.out, " gaps=0 gap_offsets=0 lost=40") || strings.Contains(r.err, "WARNING") {
				t.Errorf("restore:\nstdout %s\nstderr %s", r.out, r.err)
			}
			want := append(append([]string(nil), values[:20]...), values[60:]...)
			if got := readTopic(t, ctx, brokers, "copy_of_reten")[0]; !reflect.DeepEqual(got, want) {
				t.Errorf("restored %d records %v, want %d", len(got), got, len(want))
			}
		})
	}
}

// checkLostVerify runs verify on the reten archive: plain, --accept-lost
// and both with --json.
func checkLostVerify(t *testing.T, ctx context.Context, cfg string) {
	t.Helper()
	const line = "lost reten/0: 40 offsets 20-59 lost before archiving: Kafka deleted them (retention or DeleteRecords) before the sink read them"
	r := mustRun(t, ctx, ExitFail, "verify", "-c", cfg)
	if !strings.Contains(r.out, "problem: "+line) || !strings.Contains(r.out, "reten  0          0..99    60       0       40    ") ||
		!strings.Contains(r.out, "kafkas3 verify: 1 problems;") {
		t.Errorf("verify:\n%s", r.out)
	}
	r = mustRun(t, ctx, ExitOK, "verify", "-c", cfg, "--accept-lost")
	if !strings.Contains(r.out, "accepted: "+line) || strings.Contains(r.out, "problem: ") ||
		!strings.Contains(r.out, "kafkas3 verify: clean (1 accepted: --accept-lost);") {
		t.Errorf("verify --accept-lost:\n%s", r.out)
	}
	lost := verify.Problem{Kind: verify.KindLost, Topic: "reten", Partition: 0, First: 20, Last: 59,
		Detail: strings.TrimPrefix(line, "lost reten/0: ") + "; nothing can restore them"}
	rep := verifyJSON(t, ExitFail, "-c", cfg)
	if rep.Clean || !reflect.DeepEqual(rep.Problems, []verify.Problem{lost}) || len(rep.Accepted) != 0 ||
		len(rep.Partitions) != 1 || rep.Partitions[0].Lost != 40 || rep.Partitions[0].Absent != 0 {
		t.Errorf("verify --json: %+v", rep)
	}
	rep = verifyJSON(t, ExitOK, "-c", cfg, "--accept-lost")
	if !rep.Clean || len(rep.Problems) != 0 || !reflect.DeepEqual(rep.Accepted, []verify.Problem{lost}) || rep.Partitions[0].Problems != 0 {
		t.Errorf("verify --json --accept-lost: %+v", rep)
	}
}
