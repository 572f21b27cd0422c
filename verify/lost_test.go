package verify

import (
	"reflect"
	"testing"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
)

// TestLostRanges: offsets the index records as lost before archiving are
// a problem naming the range, counted apart from the absent offsets; with
// AcceptLost they are listed as accepted and the archive is clean. A lost
// run that another entry holds (a later archive of the same offsets) is
// not lost.
func TestLostRanges(t *testing.T) {
	st := s3store.NewMemory()
	const k0, k1, k2 = "topics/t/partition=0/t+0+0000000000.json", "topics/t/partition=0/t+0+0000000060.json", "topics/t/partition=0/t+0+0000000030.json"
	for _, k := range []string{k0, k1, k2} {
		put(t, st, k, "{}\n")
	}
	archive(t, st, 20, entry("t", 0, k0, 0, 20, []index.Run{{First: 0, Last: 19}}, obj(k0, "", "{}\n")))
	lost := entry("t", 0, k1, 20, 61, []index.Run{{First: 60, Last: 60}}, obj(k1, "", "{}\n"))
	lost.Lost = []index.Run{{First: 20, Last: 49}} // 50-59 absent
	archive(t, st, 61, lost)
	// Another group's sink archived offset 30 after all.
	held := entry("t", 0, k2, 30, 31, []index.Run{{First: 30, Last: 30}}, obj(k2, "", "{}\n"))
	put(t, st, index.Key(index.DefaultPrefix, "t", 0, 31, "0123456789ab"), mustEncode(t, held))

	cfg := baseConfig()
	cfg.Deep = false
	rep := run(t, cfg, st)
	want := []Problem{
		{Kind: KindLost, Topic: "t", Partition: 0, First: 20, Last: 29, Detail: "10 offsets 20-29 lost before archiving: Kafka deleted them (retention or DeleteRecords) before the sink read them; nothing can restore them"},
		{Kind: KindLost, Topic: "t", Partition: 0, First: 31, Last: 49, Detail: "19 offsets 31-49 lost before archiving: Kafka deleted them (retention or DeleteRecords) before the sink read them; nothing can restore them"},
	}
	if rep.Clean || !reflect.DeepEqual(rep.Problems, want) || len(rep.Accepted) != 0 {
		t.Fatalf("problems %+v accepted %+v", rep.Problems, rep.Accepted)
	}
	if p := rep.Partitions[0]; p.Lost != 29 || p.Absent != 10 || p.Records != 22 || p.Problems != 2 {
		t.Errorf("partition %+v, want 29 lost, 10 absent, 22 records, 2 problems", p)
	}
	cfg.AcceptLost = true
	rep = run(t, cfg, st)
	if !rep.Clean || len(rep.Problems) != 0 || !reflect.DeepEqual(rep.Accepted, want) || rep.Partitions[0].Problems != 0 {
		t.Fatalf("accepted: clean %v problems %+v accepted %+v", rep.Clean, rep.Problems, rep.Accepted)
	}
}

func mustEncode(t *testing.T, es ...index.Entry) string {
	t.Helper()
	b, err := index.Encode(es)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
