package index

import (
	"bytes"
	"strings"
	"testing"
)

// TestEntryRecordFacts: max_record_bytes and null_keys are omitted when
// zero (an entry without them encodes as before), round-trip when set,
// and Validate refuses a negative value, more null keys than records, and
// null keys without max_record_bytes.
func TestEntryRecordFacts(t *testing.T) {
	key := "topics/orders/partition=0/orders+0+0000000000.json"
	plain := entry(key, 0, 3, Run{First: 0, Last: 2})
	b, err := Encode([]Entry{plain})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("max_record_bytes")) || bytes.Contains(b, []byte("null_keys")) || plain.RecordsKnown() {
		t.Fatalf("an entry without the facts encodes them: %s", b)
	}
	facts := plain
	facts.MaxRecordBytes, facts.NullKeys = RecordSize(3, 10, 4, 2), 2
	if facts.MaxRecordBytes != 97+3+10+4+2*10 {
		t.Fatalf("RecordSize = %d", facts.MaxRecordBytes)
	}
	b, err = Encode([]Entry{facts})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(b, []byte(`,"max_record_bytes":134,"null_keys":2}`+"\n")) {
		t.Fatalf("encoded: %s", b)
	}
	got, err := Decode(Key(DefaultPrefix, "orders", 0, 3, ""), bytes.NewReader(b))
	if err != nil || len(got) != 1 || got[0].MaxRecordBytes != 134 || got[0].NullKeys != 2 || !got[0].RecordsKnown() {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	for _, tc := range []struct{ max, null int64 }{{-1, 0}, {100, -1}, {100, 4}, {0, 1}} {
		bad := plain
		bad.MaxRecordBytes, bad.NullKeys = tc.max, tc.null
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "max_record_bytes") {
			t.Errorf("max_record_bytes %d null_keys %d: %v, want refused", tc.max, tc.null, err)
		}
	}
}
