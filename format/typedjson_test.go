package format

import (
	"math"
	"testing"

	"github.com/twmb/avro"
)

func TestConnectJSON(t *testing.T) {
	schema := `{"type":"record","name":"R","namespace":"n","fields":[
 {"name":"i","type":"int"},{"name":"f","type":"float"},{"name":"d","type":"double"},
 {"name":"b","type":"bytes"},{"name":"opt","type":["null","string"]},{"name":"u","type":["null","int","string"]},
 {"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"]}},{"name":"fx","type":{"type":"fixed","name":"F","size":2}},
 {"name":"a","type":{"type":"array","items":"E"}},{"name":"m","type":{"type":"map","values":"long"}},
 {"name":"dt","type":{"type":"int","logicalType":"date"}},{"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"dec","type":{"type":"bytes","logicalType":"decimal","precision":5,"scale":2}},
 {"name":"neg","type":{"type":"bytes","logicalType":"decimal","precision":5,"scale":2}},
 {"name":"big","type":"double"},{"name":"nan","type":"double"}]}`
	s := avro.MustParse(schema)
	raw, err := s.Encode(map[string]any{"i": 1, "f": 1.5, "d": 2.0, "b": []byte{0xff, 0}, "opt": nil, "u": "s",
		"e": "B", "fx": []byte{3, 4}, "a": []any{"A", "B"}, "m": map[string]any{"z": 1, "a": 2},
		"dt": int32(19000), "ts": int64(1700000000123), "dec": []byte{0x30, 0x39}, "neg": []byte{0xff, 0x85},
		"big": 1e21, "nan": math.NaN()})
	if err != nil {
		t.Fatal(err)
	}
	got, err := newConnectJSON().appendValue(nil, &Typed{Schema: &Schema{Avro: s, Text: schema}, Raw: raw})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"i":1,"f":1.5,"d":2.0,"b":"/wA=","opt":null,"u":{"int":null,"string":"s"},"e":"B","fx":"AwQ=",` +
		`"a":["A","B"],"m":{"a":2,"z":1},"dt":19000,"ts":1700000000123,"dec":"MDk=","neg":"hQ==","big":1.0E21,"nan":"NaN"}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
