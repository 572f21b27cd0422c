package config

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/archive"
	"github.com/kafkas3/kafkas3/format"
)

func TestSinkOptionsKeysHeaders(t *testing.T) {
	file := writeFile(t, "c.yaml", minimalYAML)
	st, err := Load(Input{
		Command: Sink, ConfigFile: file, LookupEnv: envMap(nil),
		Params: []string{"store.kafka.keys=true", "store.kafka.headers=true", "keys.format.class=JsonFormat", "behavior.on.null.values=write"},
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.Sink(nil)
	if err != nil {
		t.Fatal(err)
	}
	a := c.Archive
	if a.KeysFormat == nil || a.KeysFormat.Kind != format.KindJSON || a.KeysFormat.Format.Extension() != ".json" ||
		a.HeadersFormat == nil || a.HeadersFormat.Kind != format.KindAvro || a.HeadersFormat.Format.Extension() != ".avro" ||
		a.NullValues != archive.NullWrite || a.TombstonePartition != "tombstone" {
		t.Fatalf("config %+v", a)
	}
	// Keys may be null: the .keys JSON format writes the line null.
	var buf bytes.Buffer
	w, err := a.KeysFormat.Format.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&format.Record{}); err != nil {
		t.Fatalf("null key: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "null\n" {
		t.Errorf(".keys JSON of a null key = %q", buf.String())
	}
}

// TestSinkIsolationLevel: the isolation level reaches the archive config
// (read_committed unless a key says read_uncommitted).
func TestSinkIsolationLevel(t *testing.T) {
	for _, tc := range []struct {
		params []string
		want   bool
	}{
		{nil, false},
		{[]string{"isolation.level=read_uncommitted"}, true},
		{[]string{"consumer.override.isolation.level=read_uncommitted"}, true},
		{[]string{"isolation.level=read_uncommitted", "consumer.override.isolation.level=read_committed"}, false},
	} {
		st, err := Load(Input{Command: Sink, ConfigFile: writeFile(t, "c.yaml", minimalYAML), Params: tc.params})
		if err != nil {
			t.Fatal(err)
		}
		c, err := st.Sink(slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		cfg := c.Archive
		if cfg.TopicCheckInterval != 5*time.Minute {
			t.Errorf("TopicCheckInterval %v, want kafkas3.topics.check.interval.ms's default 5m", cfg.TopicCheckInterval)
		}
		if cfg.ReadUncommitted != tc.want {
			t.Errorf("%v: ReadUncommitted %v, want %v", tc.params, cfg.ReadUncommitted, tc.want)
		}
	}
}

func TestTopicRecreatedKey(t *testing.T) {
	c, err := loadSink(t, "kafkas3.topic.recreated=new-generation")
	if err != nil || !c.Archive.NewGeneration {
		t.Fatalf("new-generation: %+v, %v", c.Archive.NewGeneration, err)
	}
	if c, err := loadSink(t); err != nil || c.Archive.NewGeneration {
		t.Fatalf("default: %v, %v", c.Archive.NewGeneration, err)
	}
	_, err = loadSink(t, "kafkas3.topic.recreated=new-generation", "kafkas3.index.enabled=false")
	if err == nil || !strings.Contains(err.Error(), "kafkas3.topic.recreated: \"new-generation\" needs kafkas3.index.enabled=true") {
		t.Fatalf("without the index: %v", err)
	}
	if _, err = loadSink(t, "kafkas3.topic.recreated=overwrite"); err == nil || !strings.Contains(err.Error(), "kafkas3.topic.recreated") {
		t.Fatalf("a bad choice: %v", err)
	}
}
