package cmd

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// timestamp.extractor=RecordField reads the time from typed values that
// JsonConverter with schemas gives (a Connect Timestamp logical type, an
// int64 of epoch milliseconds, a nested ISO-8601 string), written as
// Parquet, and from Avro values (timestamp-millis) written as Avro: every
// record lands in its hour.
func TestSinkCmdRecordFieldTimestamps(t *testing.T) {
	// 2026-08-01T09:15:00Z and 2026-12-31T23:30:00Z, then 2027-01-01T00:30:00+01:00 (23:30Z).
	const t1, t2 = 1785575700000, 1798759800000
	env := `{"schema":{"type":"struct","name":"E","fields":[` +
		`{"field":"at","type":"int64","name":"org.apache.kafka.connect.data.Timestamp","version":1},` +
		`{"field":"ms","type":"int64"},` +
		`{"field":"meta","type":"struct","fields":[{"field":"iso","type":"string"}]}]},` +
		`"payload":{"at":%d,"ms":%d,"meta":{"iso":"%s"}}}`
	values := [][]byte{
		fmt.Appendf(nil, env, t1, t2, "2027-01-01T00:30:00+01:00"),
		fmt.Appendf(nil, env, t2, t1, "2026-08-01T09:15:00Z"),
	}
	for _, tc := range []struct {
		field string
		want  []string
	}{
		{"at", []string{"year=2026/month=08/day=01/hour=09/r+0+0000000000", "year=2026/month=12/day=31/hour=23/r+0+0000000001"}},
		{"ms", []string{"year=2026/month=08/day=01/hour=09/r+0+0000000001", "year=2026/month=12/day=31/hour=23/r+0+0000000000"}},
		{"meta.iso", []string{"year=2026/month=08/day=01/hour=09/r+0+0000000001", "year=2026/month=12/day=31/hour=23/r+0+0000000000"}},
	} {
		t.Run(tc.field, func(t *testing.T) {
			ctx := cliContext(t)
			brokers := startKafka(t, 1, "r")
			produceValues(t, ctx, brokers, "r", values...)
			dir := t.TempDir()
			cfg := writeFile(t, "sink.yaml", strings.Replace(sinkYAML(brokers, dir, "r", 10),
				"io.confluent.connect.s3.format.json.JsonFormat", "parquet", 1)+`
value.converter: org.apache.kafka.connect.json.JsonConverter
partitioner.class: io.confluent.connect.storage.partitioner.HourlyPartitioner
locale: en-US
timezone: UTC
timestamp.extractor: RecordField
timestamp.field: `+tc.field+"\n")
			mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
			var want []string
			for _, k := range tc.want {
				want = append(want, "topics/r/"+k+".snappy.parquet")
			}
			if got := objectKeys(t, dir); !reflect.DeepEqual(got, want) {
				t.Errorf("objects %q, want %q", got, want)
			}
		})
	}
}
