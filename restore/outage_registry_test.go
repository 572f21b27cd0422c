package restore

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
)

// TestFollowRidesOutRegistryOutage (issue 13, item 2): --follow of an Avro
// archive, whose values are framed for the target's Schema Registry,
// keeps running while that registry is down (at the start, and again
// when new objects arrive), reports it down and up again each time,
// produces nothing while it cannot frame a value, and restores every
// record once, in order, with the registry's schema.
func TestFollowRidesOutRegistryOutage(t *testing.T) {
	avroF, err := format.NewAvro(format.AvroConfig{Codec: format.AvroCodecNull})
	if err != nil {
		t.Fatal(err)
	}
	a := newArchive(t, avroF)
	recs0, nat0 := typedRecords(t, 0, 3)
	// The second object's values have another schema, which the restore
	// must register (the first one's id is cached).
	other := mustSchema(t, `{"type":"record","name":"Other","fields":[{"name":"n","type":"long"}]}`)
	var recs1 []*format.Record
	var nat1 []map[string]any
	for i := range 2 {
		v := map[string]any{"n": int64(i)}
		recs1, nat1 = append(recs1, &format.Record{ValueTyped: &format.Typed{Schema: other, Native: v}}), append(nat1, v)
	}
	a.put("orders", 0, 0, recs0)
	reg, enc := startRegistry(t) // typed_test.go
	brokers := newCluster(t, 1, "copy")
	cfg := baseConfig(brokers, avroF, "orders")
	cfg.Rename, cfg.Follow, cfg.PollInterval, cfg.RetryTimeout = "copy", true, 20*time.Millisecond, 500*time.Millisecond
	cfg.ValueEncoder = enc
	st := &depStates{}
	cfg.Health = st
	reg.SetDown(true) // down at start: nothing can be framed
	done, cancel := startRestore(t, cfg, a.store)
	defer cancel()
	waitStates := func(want ...string) { t.Helper(); waitFollowStates(t, st, done, want...) }
	restored := func(n int) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for len(readTopic(t, brokers, "copy")[0]) < n {
			if time.Now().After(deadline) {
				t.Fatalf("follow: %d records restored, want %d; states %v", len(readTopic(t, brokers, "copy")[0]), n, st)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	waitStates("down registry")
	time.Sleep(300 * time.Millisecond) // passes retried while it is down
	if got := readTopic(t, brokers, "copy")[0]; len(got) != 0 {
		t.Fatalf("%d records produced while the registry was down", len(got))
	}
	reg.SetDown(false)
	waitStates("down registry", "up registry")
	restored(3)

	reg.SetDown(true)
	a.put("orders", 0, 3, recs1) // a new object, with a schema to register
	waitStates("down registry", "up registry", "down registry")
	time.Sleep(300 * time.Millisecond)
	reg.SetDown(false)
	waitStates("down registry", "up registry", "down registry", "up registry")
	restored(5)
	time.Sleep(200 * time.Millisecond) // more passes: nothing may be duplicated
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("follow stopped with %v", err)
	}
	got := readTopic(t, brokers, "copy")[0]
	want := append(nat0, nat1...)
	if len(got) != len(want) {
		t.Fatalf("copy holds %d records, want %d", len(got), len(want))
	}
	for i, rec := range got {
		if v := decodeWire(t, reg, "copy-value", rec.Value); !reflect.DeepEqual(v, map[string]any(want[i])) {
			t.Errorf("record %d value %#v, want %#v", i, v, want[i])
		}
	}
}
