package cmd

import (
	"context"
	"log/slog"

	"github.com/kafkas3/kafkas3/config"
	"github.com/kafkas3/kafkas3/restore"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/spf13/pflag"
)

// archiveFlags are the flags of the commands that read an archive without
// Kafka (verify, index rebuild): the config, the topics, the generation
// and where the archive is.
type archiveFlags struct {
	configFlags
	Topics   string
	LocalDir string
	Bucket   string
	// Generation is --generation (1, the first, by default).
	Generation int
}

// register defines the flags on fl; topicsDoc documents --topics.
func (f *archiveFlags) register(fl *pflag.FlagSet, topicsDoc string) {
	fl.StringVar(&f.Topics, "topics", "", topicsDoc)
	f.registerStore(fl)
}

// registerStore defines the flags but --topics.
func (f *archiveFlags) registerStore(fl *pflag.FlagSet) {
	fl.StringVarP(&f.ConfigFile, "config", "c", "", "config file (YAML, JSON, .properties or Connect REST JSON), the sink's file works")
	fl.StringArrayVarP(&f.Params, "param", "p", nil, "set any config key: -p key=value (repeatable)")
	fl.IntVar(&f.Generation, "generation", 1, generationFlagDoc)
	fl.StringVar(&f.LocalDir, "local-dir", "", "read the archive from this local directory instead of S3 (store.local.dir)")
	fl.StringVar(&f.Bucket, "bucket", "", "S3 bucket (s3.bucket.name)")
	fl.StringVar(&f.LogLevel, "log-level", "warn", "log level: debug, info, warn, error")
	f.logFormatFlag(fl)
}

// openedArchive is an archive opened by archiveFlags.open.
type openedArchive struct {
	sc     *config.SourceConfig
	rc     restore.Config // the source config of the chosen generation
	topics []string       // --topics; nil for every topic
	store  s3store.Store
	ident  string // the store's identity, for messages
	log    *slog.Logger
}

// open loads the config with the flags and opens the store, reporting
// every problem of both together.
func (f *archiveFlags) open(ctx context.Context, streams IO) (*openedArchive, error) {
	k := config.NewKeys()
	flags := setFlags(map[string]string{k.StoreLocalDir.Name: f.LocalDir, k.S3BucketName.Name: f.Bucket})
	settings, log, err := loadSettings(config.Source, f.configFlags, flags, streams)
	if settings == nil {
		return nil, err
	}
	sc, serr := settings.Source(log)
	var ferrs flagProblems
	a := &openedArchive{sc: sc, topics: topicsFlag(f.Topics, &ferrs), log: log}
	if sc != nil {
		a.rc = sc.Restore
		applyGeneration(f.Generation, &a.rc.Keys, &a.rc.IndexPrefix, &ferrs)
	}
	if err := config.Join(append([]error{err, serr}, ferrs...)...); err != nil {
		return nil, err
	}
	if a.store, a.ident, err = sc.Store.Open(ctx, log); err != nil {
		return nil, err
	}
	return a, nil
}
