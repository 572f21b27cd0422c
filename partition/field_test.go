package partition

import (
	"errors"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/format"
)

func TestFieldPartitioner(t *testing.T) {
	for _, tc := range []struct {
		fields []string
		rec    func(t *testing.T) *format.Record
		want   string
	}{
		{[]string{"region"}, order, "region=eu"},
		{[]string{"region", "tier", "vip", "id"}, order, "region=eu/tier=3/vip=true/id=7"},
		{[]string{"customer.country"}, order, "customer.country=de"},
		{[]string{"note"}, order, "note=null"},
		{[]string{"a", "b.c"}, func(t *testing.T) *format.Record {
			return &format.Record{Value: []byte(`{"a":-12,"b":{"c":false}}`)}
		}, "a=-12/b.c=false"},
	} {
		p, err := NewField(tc.fields, "/")
		if err != nil {
			t.Fatal(err)
		}
		if got, err := p.Encode(tc.rec(t)); err != nil || got != tc.want {
			t.Errorf("fields %v: %q, %v; want %q", tc.fields, got, err, tc.want)
		}
	}
}

func TestFieldPartitionerBadRecords(t *testing.T) {
	for _, tc := range []struct {
		field string
		rec   func(t *testing.T) *format.Record
		want  string
	}{
		{"missing", order, `value has no field "missing"`},
		{"price", order, "unsupported type float64"},
		{"customer", order, "unsupported type map"},
		{"region", func(t *testing.T) *format.Record { return &format.Record{Value: []byte(`{"region":"eu/west"}`)} }, `holds directory.delim "/"`},
		{"region", func(t *testing.T) *format.Record { return &format.Record{Value: []byte(`not json`)} }, "not a JSON object"},
		{"region", func(t *testing.T) *format.Record { return &format.Record{} }, "the value is null"},
		{"n", func(t *testing.T) *format.Record { return &format.Record{Value: []byte(`{"n":2.5}`)} }, "unsupported value 2.5"},
	} {
		p, err := NewField([]string{tc.field}, "/")
		if err != nil {
			t.Fatal(err)
		}
		wantBadRecord(t, p, tc.rec(t), tc.field, tc.want)
	}
	for _, fields := range [][]string{nil, {" "}, {"a..b"}, {".a"}} {
		if _, err := NewField(fields, "/"); err == nil {
			t.Errorf("NewField(%q) accepted", fields)
		}
	}
}

// wantBadRecord encodes r (placed at orders partition 3 offset 42) with p
// and requires an ErrBadRecord that names the record and contains want.
func wantBadRecord(t *testing.T, p Partitioner, r *format.Record, field, want string) {
	t.Helper()
	r.Topic, r.Partition, r.Offset = "orders", 3, 42
	_, err := p.Encode(r)
	if !errors.Is(err, ErrBadRecord) || !strings.Contains(err.Error(), want) ||
		!strings.Contains(err.Error(), "topic orders partition 3 offset 42") {
		t.Errorf("field %s: %v; want ErrBadRecord naming the record and %q", field, err, want)
	}
}
