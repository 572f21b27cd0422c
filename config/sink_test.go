package config

import "testing"

func TestSinkOptionsKeysHeaders(t *testing.T) {
	file := writeFile(t, "c.yaml", minimalYAML)
	st, err := Load(Input{
		Command: Sink, ConfigFile: file, LookupEnv: envMap(nil),
		Params: []string{"store.kafka.keys=true", "store.kafka.headers=true", "keys.format.class=JsonFormat", "behavior.on.null.values=write"},
	})
	if err != nil {
		t.Fatal(err)
	}
	o, err := st.Sink()
	if err != nil {
		t.Fatal(err)
	}
	if !o.StoreKeys || !o.StoreHeaders || o.KeysFormat != FormatJSON || o.HeadersFormat != FormatAvro || o.NullValues != NullValuesWrite || o.TombstonePartition != "tombstone" {
		t.Fatalf("options %+v", o)
	}
}
