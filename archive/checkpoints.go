package archive

import (
	"context"
	"sync"

	"github.com/kafkas3/kafkas3/checkpoint"
	"github.com/kafkas3/kafkas3/index"
)

// This file holds the sink's checkpoints of the archive index
// (Config.CheckpointInterval, package checkpoint). They are written in the
// background, off the record path: a partition's checkpoint is due after
// CheckpointInterval index objects, and at its first commit of a run when
// the sink has written none yet this run (a writer's first checkpoint of a
// partition also checkpoints the writers without one, checkpoint.Write),
// and is written only up to the offset the group has committed, so that a
// replay never rewrites an index object a checkpoint covers. Before its
// first index object of a partition in a run the sink writes its start
// checkpoint when it needs one and voids its checkpoints above the offset
// it starts from (beginCheckpoints, indexwriter.go; written with
// checkpoints off too: readers list the log only after the lowest live
// checkpoint). --once writes the remaining ones after its final commit
// (flush). A failure is a warning; the index stays correct (the previous
// checkpoint and a longer tail), and the next commit retries.

// checkpointReadConcurrency bounds the index objects read at once to
// build one checkpoint.
const checkpointReadConcurrency = 8

// checkpointer tracks, per partition, the index objects written since its
// last checkpoint and the committed offset, and writes the checkpoints
// that are due.
type checkpointer struct {
	s      *Sink
	writer string
	wake   chan struct{}

	mu    sync.Mutex
	parts map[tp]*ckptState
}

// ckptState is one partition's: its index prefix (a generation's own),
// the commits of its index objects not yet checkpointed, in order, the
// offset committed, and whether a checkpoint was written this run.
type ckptState struct {
	prefix    string
	pending   []int64
	committed int64
	wrote     bool
}

func newCheckpointer(s *Sink) *checkpointer {
	return &checkpointer{s: s, writer: index.WriterOf(s.cfg.GroupID), wake: make(chan struct{}, 1), parts: map[tp]*ckptState{}}
}

// indexed notes an index object of the partition stored at commit.
func (c *checkpointer) indexed(prefix, topic string, p int32, commit int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.parts[tp{topic, p}]
	if st == nil {
		st = &ckptState{committed: -1}
		c.parts[tp{topic, p}] = st
	}
	st.prefix = prefix
	st.pending = append(st.pending, commit)
}

// committed notes that offset was committed for k, and wakes the loop.
func (c *checkpointer) committed(k tp, offset int64) {
	c.mu.Lock()
	if st := c.parts[k]; st != nil && offset > st.committed {
		st.committed = offset
	}
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// ckptJob is a checkpoint to write.
type ckptJob struct {
	k      tp
	prefix string
	upTo   int64
}

// due returns the checkpoints to write: all with a committed index object
// not yet covered when all is set, else those due (see the file comment).
func (c *checkpointer) due(all bool) []ckptJob {
	c.mu.Lock()
	defer c.mu.Unlock()
	var jobs []ckptJob
	for k, st := range c.parts {
		n := 0
		for n < len(st.pending) && st.pending[n] <= st.committed {
			n++
		}
		if n > 0 && (all || !st.wrote || len(st.pending) >= c.s.cfg.CheckpointInterval) {
			jobs = append(jobs, ckptJob{k: k, prefix: st.prefix, upTo: st.committed})
		}
	}
	return jobs
}

// done forgets the index objects a checkpoint up to upTo covers.
func (c *checkpointer) done(k tp, upTo int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.parts[k]
	n := 0
	for n < len(st.pending) && st.pending[n] <= upTo {
		n++
	}
	st.pending = st.pending[n:]
	st.wrote = true
}

// loop writes the due checkpoints whenever a commit wakes it, until ctx
// ends.
func (c *checkpointer) loop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
			c.write(ctx, c.due(false))
		}
	}
}

// flush writes every checkpoint with a committed index object not yet
// covered (the end of --once).
func (c *checkpointer) flush(ctx context.Context) { c.write(ctx, c.due(true)) }

// write writes jobs; a failure is a warning.
func (c *checkpointer) write(ctx context.Context, jobs []ckptJob) {
	for _, j := range jobs {
		p := checkpoint.Partition{Prefix: j.prefix, Topic: j.k.topic, Partition: j.k.partition, Writer: c.writer}
		r, err := checkpoint.Write(ctx, c.s.store, p, j.upTo, checkpointReadConcurrency)
		if err != nil {
			if ctx.Err() == nil {
				c.s.log.Warn("archive index checkpoint not written; readers read a longer tail of the index until the next one", "topic", j.k.topic, "partition", j.k.partition, "err", err)
			}
			continue
		}
		c.done(j.k, j.upTo)
		if r.Key != "" {
			c.s.log.Debug("archive index checkpoint written", "key", r.Key, "index_objects", r.LogObjects, "read", r.Read)
		}
	}
}
