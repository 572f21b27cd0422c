//go:build integration

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/avro"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkas3/kafkas3/convert"
	"github.com/kafkas3/kafkas3/format"
)

// seedConnectorJSON is the archiving configuration of the seed article
// ("a complete working archiving configuration"), as submitted to the
// Connect REST API: hourly-partitioned Parquet of orders and payments with
// the TimeBasedPartitioner and record timestamps. The test changes only
// the endpoints and adds the converter, as the issue allows.
const seedConnectorJSON = `{
"name": "s3-archive-orders",
"config": {
"connector.class": "io.confluent.connect.s3.S3SinkConnector",
"tasks.max": "2",
"topics": "orders,payments",
"s3.bucket.name": "example-kafka-archive",
"s3.region": "eu-west-1",
"storage.class": "io.confluent.connect.s3.storage.S3Storage",
"format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat",
"flush.size": "10000",
"rotate.interval.ms": "3600000",
"partitioner.class": "io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
"partition.duration.ms": "3600000",
"path.format": "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH",
"locale": "en-US",
"timezone": "UTC",
"timestamp.extractor": "Record"
}
}`

const seedSchema = `{"type":"record","name":"Order","namespace":"shop","fields":[
 {"name":"id","type":"long"},{"name":"partition","type":"int"},
 {"name":"customer","type":"string"},{"name":"amount","type":"double"}]}`

// seedRecord is where record i of partition p is and what it holds.
type seedRecord struct {
	p  int32
	i  int
	at time.Time
}

// seedRecords: orders partition 0 has 10,000 records in the hour from
// 2026-08-01T08:00Z and 4,000 from 09:00Z (so its second object starts at
// offset 10000 in hour=09), partition 1 has 3,000 spread over 09:00-11:59Z;
// payments has 500 at 10:00Z.
func seedRecords() map[string][]seedRecord {
	h8 := time.Date(2026, 8, 1, 8, 0, 0, 0, time.UTC)
	h9 := h8.Add(time.Hour)
	out := map[string][]seedRecord{}
	for i := range 14000 {
		at := h8.Add(time.Duration(i) * 300 * time.Millisecond)
		if i >= 10000 {
			at = h9.Add(time.Duration(i-10000) * 500 * time.Millisecond)
		}
		out["orders"] = append(out["orders"], seedRecord{0, i, at})
	}
	for i := range 3000 {
		out["orders"] = append(out["orders"], seedRecord{1, i, h9.Add(time.Duration(i) * 3600 * time.Millisecond)})
	}
	for i := range 500 {
		out["payments"] = append(out["payments"], seedRecord{0, i, h9.Add(time.Hour + time.Duration(i)*time.Second)})
	}
	return out
}

func seedValue(r seedRecord) map[string]any {
	return map[string]any{"id": int64(r.i), "partition": r.p, "customer": fmt.Sprintf("c-%d", r.i%97), "amount": float64(r.i) / 4}
}

// TestIntegrationSeedConfigurationRuns runs the seed article's archiving
// configuration unchanged (apart from endpoints and the AvroConverter with
// a registry): the objects are named as the article shows
// (topics/orders/year=2026/month=08/day=01/hour=09/orders+0+0000010000.snappy.parquet),
// DuckDB reads the bucket's objects with hive partitioning and sees the
// year, month, day and hour columns with every record in its hour, and
// kafkas3 source restores orders with every record in order.
func TestIntegrationSeedConfigurationRuns(t *testing.T) {
	if err := exec.Command("python3", "-c", "import duckdb").Run(); err != nil {
		t.Fatalf("python3 with duckdb is required (pip install duckdb): %v", err)
	}
	b := newBed(t)
	for _, topic := range []string{"orders", "payments"} {
		if err := b.k.CreateTopicContext(context.Background(), topic, map[string]int32{"orders": 2, "payments": 1}[topic]); err != nil {
			t.Fatalf("create %s: %v (the seed's topic names are fixed: run this test once per broker)", topic, err)
		}
	}
	srcReg := typedRegistry(t)
	recs := seedRecords()
	b.produceSeed(t, srcReg.URL(), recs)

	bucket := b.s.CreateBucket(t)
	cfg := b.seedConfig(t, bucket, srcReg.URL())
	sum, _ := runOnce(t, "sink --once (seed configuration)", cfg)
	if want := int64(len(recs["orders"]) + len(recs["payments"])); sum.records != want {
		t.Fatalf("sink summary %s, want %d records", sum.line, want)
	}
	objs, _ := splitIndex(b.snapshot(t, bucket))
	var keys []string
	for k := range objs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	wantKeys := []string{
		"topics/orders/year=2026/month=08/day=01/hour=08/orders+0+0000000000.snappy.parquet",
		"topics/orders/year=2026/month=08/day=01/hour=09/orders+0+0000010000.snappy.parquet",
		"topics/orders/year=2026/month=08/day=01/hour=09/orders+1+0000000000.snappy.parquet",
		"topics/orders/year=2026/month=08/day=01/hour=10/orders+1+0000001000.snappy.parquet",
		"topics/orders/year=2026/month=08/day=01/hour=11/orders+1+0000002000.snappy.parquet",
		"topics/payments/year=2026/month=08/day=01/hour=10/payments+0+0000000000.snappy.parquet",
	}
	if strings.Join(keys, "\n") != strings.Join(wantKeys, "\n") {
		t.Fatalf("object keys\n  %s\nwant\n  %s", strings.Join(keys, "\n  "), strings.Join(wantKeys, "\n  "))
	}
	seedDuckDB(t, objs, recs)

	dstReg := typedRegistry(t)
	restoreCfg := b.seedConfig(t, bucket, dstReg.URL())
	rs, _ := srcRunOK(t, "source", restoreCfg, "--topics", "orders", "--topic-rename", "copy_of_$0", "--create-topics")
	if rs.records != int64(len(recs["orders"])) {
		t.Fatalf("source summary %s, want %d records", rs.line, len(recs["orders"]))
	}
	b.checkSeedRestore(t, dstReg.URL(), "copy_of_orders", recs["orders"])
}

// seedConfig writes the seed's Connect REST JSON with the test bed's
// endpoints and the AvroConverter.
func (b *bed) seedConfig(t *testing.T, bucket, registry string) string {
	t.Helper()
	var doc struct {
		Name   string            `json:"name"`
		Config map[string]string `json:"config"`
	}
	if err := json.Unmarshal([]byte(seedConnectorJSON), &doc); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"bootstrap.servers": b.k.Addr, "s3.bucket.name": bucket, "s3.region": b.s.Region, "store.url": b.s.Endpoint,
		"aws.access.key.id": b.s.AccessKey, "aws.secret.access.key": b.s.SecretKey,
		"value.converter": "io.confluent.connect.avro.AvroConverter", "value.converter.schema.registry.url": registry,
	} {
		doc.Config[k] = v
	}
	body, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s3-archive-orders.json")
	if err := os.WriteFile(path, body, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// produceSeed writes the records in Confluent's Avro wire format, in
// order per partition, with their timestamps.
func (b *bed) produceSeed(t *testing.T, registry string, recs map[string][]seedRecord) {
	t.Helper()
	parsed, err := avro.Parse(seedSchema)
	if err != nil {
		t.Fatal(err)
	}
	schema := &format.Schema{Avro: parsed, Text: seedSchema}
	ser := typedConverter(t, registry)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := b.k.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.MaxBufferedRecords(50_000))
	var mu sync.Mutex
	var firstErr error
	for topic, rs := range recs {
		for _, r := range rs {
			v, err := ser.Encode(ctx, convert.SubjectName(topic, false), schema, seedValue(r))
			if err != nil {
				t.Fatal(err)
			}
			cl.Produce(ctx, &kgo.Record{Topic: topic, Partition: r.p, Value: v, Timestamp: r.at}, func(_ *kgo.Record, err error) {
				mu.Lock()
				defer mu.Unlock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
			})
		}
	}
	if err := cl.Flush(ctx); err != nil || firstErr != nil {
		t.Fatalf("produce: %v %v", err, firstErr)
	}
}

// seedDuckDB has DuckDB read the bucket's objects with hive partitioning
// and count the records per topic folder and hour columns.
func seedDuckDB(t *testing.T, objs map[string]object, recs map[string][]seedRecord) {
	t.Helper()
	dir := t.TempDir()
	for k, o := range objs {
		f := filepath.Join(dir, filepath.FromSlash(k))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, o.data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	query := `import duckdb, json, sys
rows = duckdb.sql("""SELECT year, month, day, hour, partition, count(*) AS n, min(id) AS lo, max(id) AS hi
  FROM read_parquet('` + filepath.ToSlash(dir) + `/topics/orders/*/*/*/*/*.parquet', hive_partitioning = true)
  GROUP BY ALL ORDER BY ALL""").fetchall()
print(json.dumps([[str(c) for c in r] for r in rows]))`
	out, err := exec.Command("python3", "-c", query).CombinedOutput()
	if err != nil {
		t.Fatalf("duckdb: %v\n%s", err, out)
	}
	// Expected: per (hour, partition), the count and id range, from the produced records.
	type cell struct {
		n      int
		lo, hi int
	}
	want := map[string]*cell{}
	for _, r := range recs["orders"] {
		k := fmt.Sprintf("2026 08 01 %02d %d", r.at.Hour(), r.p) // hive values as the folders spell them
		c := want[k]
		if c == nil {
			c = &cell{lo: r.i, hi: r.i}
			want[k] = c
		}
		c.n++
		c.lo, c.hi = min(c.lo, r.i), max(c.hi, r.i)
	}
	var rows [][]string
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("duckdb output %s: %v", out, err)
	}
	if len(rows) != len(want) {
		t.Fatalf("duckdb rows %v, want %d (hour, partition) groups", rows, len(want))
	}
	for _, r := range rows {
		k := strings.Join(r[:5], " ")
		c := want[k]
		if c == nil || r[5] != fmt.Sprint(c.n) || r[6] != fmt.Sprint(c.lo) || r[7] != fmt.Sprint(c.hi) {
			t.Errorf("duckdb row year month day hour partition n lo hi = %v, want %+v", r, c)
		}
	}
	t.Logf("DuckDB (hive partitioning) sees year, month, day and hour columns: %v", rows)
}

// checkSeedRestore reads target and requires every partition to hold the
// records of the source partition, in order (their ids 0, 1, 2, ...).
func (b *bed) checkSeedRestore(t *testing.T, registry, target string, recs []seedRecord) {
	t.Helper()
	conv := typedConverter(t, registry)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	got := map[int32][]int64{}
	for p, rs := range b.dumpTopic(t, target) {
		for _, r := range rs {
			typed, err := conv.Convert(ctx, target, false, r.Value)
			if err != nil {
				t.Fatalf("%s partition %d offset %d: %v", target, p, r.Offset, err)
			}
			native, err := format.AvroNative(typed)
			if err != nil {
				t.Fatal(err)
			}
			got[p] = append(got[p], native.(map[string]any)["id"].(int64))
		}
	}
	want := map[int32][]int64{}
	for _, r := range recs {
		want[r.p] = append(want[r.p], int64(r.i))
	}
	for p, ids := range want {
		if fmt.Sprint(got[p]) != fmt.Sprint(ids) {
			t.Errorf("%s partition %d: %d records, not the %d source records in order", target, p, len(got[p]), len(ids))
		}
	}
	if len(got) != len(want) {
		t.Errorf("%s has %d partitions with records, want %d", target, len(got), len(want))
	}
}
