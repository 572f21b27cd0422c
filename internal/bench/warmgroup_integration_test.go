//go:build integration

package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// warmGroupTopic and warmGroup are what warmGroups uses.
const (
	warmGroupTopic = "bench-warm-group"
	warmGroup      = "bench-warm-group"
)

// warmGroups runs one consumer group through join, fetch, commit and leave
// on a one-record topic before anything is measured. A fresh broker
// creates __consumer_offsets and runs its group coordinator's code for the
// first time on the first group that joins; without this, that one-time
// cost of the cluster (measured: 1.7 s of wall time and 0.9 CPU s of the
// broker) fell on the first measured sink run, while the limit baselines
// and raw consumes, which use no group, never pay it.
func (e *env) warmGroups() {
	ctx, cancel := context.WithTimeout(e.ctx, 2*time.Minute)
	defer cancel()
	if err := e.kafka.CreateTopicContext(ctx, warmGroupTopic, 1); err != nil {
		e.b.Fatal(err)
	}
	if err := e.warmGroup(ctx); err != nil {
		e.b.Fatalf("warming the group coordinator: %v", err)
	}
}

func (e *env) warmGroup(ctx context.Context) error {
	p, err := e.kafka.NewClient(kgo.DefaultProduceTopic(warmGroupTopic))
	if err != nil {
		return err
	}
	err = p.ProduceSync(ctx, &kgo.Record{Value: []byte("warm")}).FirstErr()
	p.Close()
	if err != nil {
		return fmt.Errorf("produce to %s: %w", warmGroupTopic, err)
	}
	cl, err := e.kafka.NewClient(kgo.ConsumerGroup(warmGroup), kgo.ConsumeTopics(warmGroupTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	if err != nil {
		return err
	}
	defer cl.Close()
	for n := 0; n == 0; {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("consume %s in group %s: %w", warmGroupTopic, warmGroup, err)
		}
		n = fs.NumRecords()
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		return fmt.Errorf("commit in group %s: %w", warmGroup, err)
	}
	return nil
}
