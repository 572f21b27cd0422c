package cmd

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/kafkas3/kafkas3/s3store"
)

// generationFlagDoc documents --generation on source and verify.
const generationFlagDoc = "generation of a recreated topic to read: 1 (the default) is the first topic of its name, in topics.dir; n >= 2 the one the sink " +
	"archived after the topic was deleted and created again n-1 times (kafkas3.topic.recreated=new-generation), in <topics.dir>/generation=n with its index under <kafkas3.index.prefix>generation=n/"

// applyGeneration points keys and prefix at generation gen of the archive
// (index.GenerationTopicsDir, index.GenerationPrefix), reporting a bad
// number as a problem of --generation.
func applyGeneration(gen int, keys *partition.KeyConfig, prefix *string, errs *flagProblems) {
	if gen < 0 {
		errs.bad("--generation", "is %d; want 1 (the first topic of a name, also 0: not set) or more", gen)
		return
	}
	keys.TopicsDir = index.GenerationTopicsDir(keys.TopicsDir, gen)
	*prefix = index.GenerationPrefix(*prefix, gen)
}

// noteGenerations tells, for each of topics, when the archive holds a
// newer generation than gen (the topic was deleted and created again,
// kafkas3.topic.recreated=new-generation) and how to read it. rootPrefix is
// the archive's index prefix (generation 1's), where the sink records
// every generation's description. A store failure is only logged.
func noteGenerations(ctx context.Context, st s3store.Store, rootPrefix string, topics []string, gen int, w io.Writer, log *slog.Logger) {
	if rootPrefix == "" {
		return
	}
	for _, t := range topics {
		d, err := index.LatestTopic(ctx, st, rootPrefix, t)
		if err != nil {
			log.Warn("cannot read the topic's latest description to check for newer generations", "topic", t, "err", err)
			continue
		}
		if d == nil || d.Gen() <= max(gen, 1) {
			continue
		}
		fmt.Fprintf(w, "kafkas3: note: topic %s was deleted and created again: the archive also holds generation %d (topic id %s) of it; "+
			"this run reads generation %d, pass --generation %s for the newest\n", t, d.Gen(), d.TopicID, max(gen, 1), strconv.Itoa(d.Gen()))
	}
}
