//go:build integration

package bench

import "fmt"

// The 1,000-partition memory run (issue 12, item 5): small in bytes, so
// that it is cheap, but with 1,000 objects open at once for the whole run.
const (
	thousandPartitions = 1000
	thousandBytes      = 256 << 10 // per partition: 256 MiB in all
	thousandRSSKiB     = 300 << 10 // 300 MiB
)

// thousandRows loads a topic of 1,000 partitions (256 KiB of 1 KiB records
// each, all filled) and runs the sink in bytes and JSON+gzip with
// flush.size above the records per partition, so each of the 1,000
// objects stays open until the end: the peak RSS must stay under 300 MiB.
func (e *env) thousandRows() {
	d := dataset{Kind: kindRandom, Topic: "bench1000", Partitions: thousandPartitions,
		Records: thousandPartitions * (thousandBytes / valueSize), ValueSize: valueSize, Run: 64}
	e.facts.add("1,000-partition data set", fmt.Sprintf("%d records of %d B (%s, %s per partition) in %d partitions, JSON with base64 of random bytes",
		d.Records, valueSize, human(d.Bytes()), human(thousandBytes), d.Partitions))
	e.createTopic(d.Topic, d.Partitions)
	e.produceRow("load: franz-go idempotent producer, 1,000 partitions", d, "")
	perPart := d.Records / int64(d.Partitions)
	for _, f := range []string{fmtBytes, fmtJSONGzip, fmtJSONZstd} {
		r := e.sinkRow(fmt.Sprintf("sink %s --once, 1,000 partitions, every object open to the end", f), d, f, int(perPart+1), 0, false)
		if n := len(e.listObjects(r.bucket)); n != thousandPartitions {
			e.failures = append(e.failures, fmt.Sprintf("%s: %d objects, want %d (one per partition)", r.name, n, thousandPartitions))
		}
		if r.rssKiB >= thousandRSSKiB {
			e.failures = append(e.failures, fmt.Sprintf("sink %s with %d partitions: peak RSS %.1f MiB, limit %d MiB",
				f, thousandPartitions, float64(r.rssKiB)/1024, thousandRSSKiB>>10))
			r.note += fmt.Sprintf(", **over the %d MiB limit**", thousandRSSKiB>>10)
		} else {
			r.note += fmt.Sprintf(", under the %d MiB limit", thousandRSSKiB>>10)
		}
	}
}
