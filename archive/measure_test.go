package archive

import (
	"fmt"
	"testing"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestIndexRecordsSizesAndNullKeys: each entry records its largest record
// as a restore produces it (max_record_bytes: the key and headers only
// when the archive keeps them) and the records a restore produces without
// a key (null_keys: every record when no .keys object keeps the keys,
// none when one keeps them all).
func TestIndexRecordsSizesAndNullKeys(t *testing.T) {
	for _, keys := range []bool{false, true} {
		t.Run(fmt.Sprint("keys ", keys), func(t *testing.T) {
			topic := fmt.Sprintf("ms%v", keys)
			brokers := newCluster(t, 1, topic)
			var recs []*kgo.Record
			for i := range 3 {
				r := &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "key-%d", i), Value: fmt.Appendf(nil, `{"i":%d}`, i*100),
					Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("hv")}}}
				if i == 1 && !keys {
					r.Key = nil // a JSON .keys object cannot hold a null key
				}
				recs = append(recs, r)
			}
			produceRecs(t, brokers, recs...)
			store := s3store.NewMemory()
			cfg := indexConfig(brokers, topic)
			if keys {
				cfg.KeysFormat = &PartFormat{Format: format.NewJSON(), Kind: format.KindJSON}
				cfg.HeadersFormat = &PartFormat{Format: format.NewJSON(), Kind: format.KindJSON}
			}
			runSink(t, cfg, store)
			ix := loadIndex(t, store)
			if len(ix.Entries) != 1 {
				t.Fatalf("%d entries, want 1", len(ix.Entries))
			}
			e := ix.Entries[0]
			// The largest record: {"i":200} (9 bytes), key-2 (5), header h=hv (3).
			wantSize, wantNull := index.RecordSize(0, 9, 0, 0), int64(3)
			if keys {
				wantSize, wantNull = index.RecordSize(5, 9, 3, 1), 0
			}
			if e.MaxRecordBytes != wantSize || e.NullKeys != wantNull || !e.RecordsKnown() {
				t.Fatalf("max_record_bytes %d null_keys %d, want %d %d", e.MaxRecordBytes, e.NullKeys, wantSize, wantNull)
			}
		})
	}
}
