package convert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/avro"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/internal/srfake"
)

const quickstartSchema = `{"type":"record","name":"myrecord","fields":[{"name":"f1","type":"string"}]}`

func startRegistry(t *testing.T, cfg srfake.Config) *srfake.Server {
	t.Helper()
	s, err := srfake.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func wire(t *testing.T, id int, schema string, v any) []byte {
	t.Helper()
	b, err := avro.MustParse(schema).AppendEncode(AppendWireHeader(nil, id), v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestLookup(t *testing.T) {
	for in, want := range map[string]Kind{
		"io.confluent.connect.avro.AvroConverter": KindAvro,
		"avro": KindAvro,
		"org.apache.kafka.connect.json.JsonConverter": KindJSON,
		"JSON": KindJSON,
		"org.apache.kafka.connect.storage.StringConverter": KindString,
		"string": KindString,
		"org.apache.kafka.connect.converters.ByteArrayConverter": KindByteArray,
		" bytearray ": KindByteArray,
		"bytes":       KindByteArray,
	} {
		got, err := Lookup(in)
		if err != nil || got != want {
			t.Errorf("Lookup(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	_, err := Lookup("io.confluent.connect.protobuf.ProtobufConverter")
	if !errors.Is(err, ErrUnknownConverter) || !strings.Contains(err.Error(), "ProtobufConverter") {
		t.Errorf("protobuf: %v", err)
	}
	if KindAvro.String() != "avro" || KindJSON.ClassName() != "org.apache.kafka.connect.json.JsonConverter" {
		t.Error("names")
	}
}

func TestAvroConvertWireFormat(t *testing.T) {
	reg := startRegistry(t, srfake.Config{})
	id, ver, err := reg.Register("s3_topic-value", "", quickstartSchema)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewAvro(Config{Kind: KindAvro, SchemaRegistryURL: reg.URL()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var first *format.Schema
	for i := range 10 {
		data := wire(t, id, quickstartSchema, map[string]any{"f1": fmt.Sprintf("value%d", i)})
		typed, err := c.Convert(ctx, "s3_topic", false, data)
		if err != nil {
			t.Fatal(err)
		}
		if typed.Schema.ID != id || typed.Schema.Version != ver || typed.Schema.Text != quickstartSchema {
			t.Fatalf("schema %+v, want id %d version %d", typed.Schema, id, ver)
		}
		if !bytes.Equal(typed.Raw, data[5:]) || typed.Native != nil {
			t.Fatal("Raw is not the datum, or Native was decoded eagerly")
		}
		v, err := format.AvroNative(typed)
		if err != nil || v.(map[string]any)["f1"] != fmt.Sprintf("value%d", i) {
			t.Fatalf("native %v, %v", v, err)
		}
		if first == nil {
			first = typed.Schema
		} else if typed.Schema != first {
			t.Fatal("schema not shared between records")
		}
	}
	// Cache: one schema fetch and one version lookup for ten records.
	path := fmt.Sprintf("/schemas/ids/%d", id)
	if n := reg.Requests("GET", path); n != 1 {
		t.Errorf("GET %s made %d times, want 1", path, n)
	}
	if n := reg.Requests("GET", path+"/versions"); n != 1 {
		t.Errorf("GET %s/versions made %d times, want 1", path, n)
	}
	// The key subject has its own (absent) version: 0.
	typed, err := c.Convert(ctx, "s3_topic", true, wire(t, id, quickstartSchema, map[string]any{"f1": "k"}))
	if err != nil || typed.Schema.Version != 0 || typed.Schema.ID != id {
		t.Fatalf("key: %+v, %v", typed, err)
	}
	if n := reg.Requests("GET", path); n != 1 {
		t.Errorf("key conversion refetched the schema (%d)", n)
	}

	// Null.
	if typed, err := c.Convert(ctx, "s3_topic", false, nil); typed != nil || err != nil {
		t.Errorf("null: %v, %v", typed, err)
	}
	// Bad data, each naming what is wrong.
	good := wire(t, id, quickstartSchema, map[string]any{"f1": "value1"})
	bad := map[string]struct {
		data []byte
		want string
	}{
		"unknown id":  {wire(t, 4242, quickstartSchema, map[string]any{"f1": "x"}), "schema id 4242"},
		"bad magic":   {append([]byte{1}, good[1:]...), "magic byte 1"},
		"short":       {[]byte{0, 0, 1}, "3 bytes"},
		"truncated":   {good[:len(good)-2], fmt.Sprintf("schema id %d", id)},
		"extra bytes": {append(bytes.Clone(good), 7), "left after the datum"},
	}
	for name, b := range bad {
		_, err := c.Convert(ctx, "s3_topic", false, b.data)
		if !errors.Is(err, ErrBadData) || !strings.Contains(err.Error(), b.want) || !strings.Contains(err.Error(), `"s3_topic" value`) {
			t.Errorf("%s: %v; want ErrBadData naming %q and the topic", name, err, b.want)
		}
	}
	// A non-Avro schema id is bad data too.
	jid, _, _ := reg.Register("j-value", "JSON", `{"type":"object"}`)
	if _, err := c.Convert(ctx, "j", false, AppendWireHeader(nil, jid)); !errors.Is(err, ErrBadData) || !strings.Contains(err.Error(), "not Avro") {
		t.Errorf("JSON schema id: %v", err)
	}
}

func TestAvroConvertRegistryDown(t *testing.T) {
	reg := startRegistry(t, srfake.Config{})
	c, err := NewAvro(Config{Kind: KindAvro, SchemaRegistryURL: reg.URL()})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = c.Convert(context.Background(), "t", false, wire(t, 1, quickstartSchema, map[string]any{"f1": "x"}))
	if !errors.Is(err, ErrRegistry) || errors.Is(err, ErrBadData) {
		t.Errorf("registry down: %v; want ErrRegistry, not ErrBadData", err)
	}
}

func TestAvroConvertBasicAuth(t *testing.T) {
	reg := startRegistry(t, srfake.Config{User: "sr-user", Password: "p:ss"})
	id, _, _ := reg.Register("t-value", "", quickstartSchema)
	data := wire(t, id, quickstartSchema, map[string]any{"f1": "x"})
	ctx := context.Background()
	hostURL := reg.URL()
	userURL := strings.Replace(hostURL, "http://", "http://sr-user:p%3Ass@", 1)

	ok := []Config{
		{SchemaRegistryURL: hostURL, BasicAuthCredentialsSource: "USER_INFO", BasicAuthUserInfo: "sr-user:p:ss"},
		{SchemaRegistryURL: userURL},
		{SchemaRegistryURL: userURL, BasicAuthCredentialsSource: "URL"},
		{SchemaRegistryURL: "http://127.0.0.1:1, " + hostURL, BasicAuthCredentialsSource: "user_info", BasicAuthUserInfo: "sr-user:p:ss"},
	}
	for i, cfg := range ok {
		c, err := NewAvro(cfg)
		if err != nil {
			t.Fatalf("config %d: %v", i, err)
		}
		if _, err := c.Convert(ctx, "t", false, data); err != nil {
			t.Errorf("config %d: %v", i, err)
		}
	}
	for i, cfg := range []Config{
		{SchemaRegistryURL: hostURL},
		{SchemaRegistryURL: hostURL, BasicAuthCredentialsSource: "USER_INFO", BasicAuthUserInfo: "sr-user:wrong"},
	} {
		c, err := NewAvro(cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Convert(ctx, "t", false, data)
		if !errors.Is(err, ErrRegistry) || !errors.Is(err, ErrRegistryAuth) || !strings.Contains(err.Error(), "Unauthorized") {
			t.Errorf("unauthenticated %d: %v", i, err)
		}
	}
	for name, cfg := range map[string]Config{
		"no url":            {KeyPrefix: "value.converter."},
		"bad url":           {SchemaRegistryURL: "ftp://x", KeyPrefix: "value.converter."},
		"info, no source":   {SchemaRegistryURL: hostURL, BasicAuthUserInfo: "a:b", KeyPrefix: "value.converter."},
		"no colon":          {SchemaRegistryURL: hostURL, BasicAuthCredentialsSource: "USER_INFO", BasicAuthUserInfo: "ab", KeyPrefix: "value.converter."},
		"sasl inherit":      {SchemaRegistryURL: hostURL, BasicAuthCredentialsSource: "SASL_INHERIT", KeyPrefix: "value.converter."},
		"json kind unknown": {Kind: Kind(99)},
	} {
		var err error
		if cfg.Kind == 0 {
			_, err = NewAvro(cfg)
		} else {
			_, err = New(cfg)
		}
		if !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: %v", name, err)
		}
		if cfg.KeyPrefix != "" && !strings.Contains(err.Error(), "value.converter.") {
			t.Errorf("%s: error %q does not name the key", name, err)
		}
	}
}

// TestAvroEncodeRegistersInTarget restores values into another registry:
// the schema is registered under the subject once, and the framed bytes
// decode back through a converter reading that registry.
func TestAvroEncodeRegistersInTarget(t *testing.T) {
	target := startRegistry(t, srfake.Config{})
	// Occupy id 1 with another schema so ids differ from the source's.
	if _, _, err := target.Register("other-value", "", `"string"`); err != nil {
		t.Fatal(err)
	}
	c, err := NewAvro(Config{SchemaRegistryURL: target.URL()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	schema := &format.Schema{ID: 1, Avro: avro.MustParse(quickstartSchema), Text: quickstartSchema}
	var outs [][]byte
	for i := range 5 {
		out, err := c.Encode(ctx, "s3_topic-value", schema, map[string]any{"f1": fmt.Sprintf("v%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out)
	}
	if n := target.Requests("POST", "/subjects/s3_topic-value/versions"); n != 1 {
		t.Errorf("registered %d times, want 1", n)
	}
	if n := target.Requests("POST", "/subjects/s3_topic-value"); n != 1 {
		t.Errorf("looked up %d times, want 1", n)
	}
	back, err := NewAvro(Config{SchemaRegistryURL: target.URL()})
	if err != nil {
		t.Fatal(err)
	}
	for i, out := range outs {
		typed, err := back.Convert(ctx, "s3_topic", false, out)
		if err != nil {
			t.Fatal(err)
		}
		if typed.Schema.ID != 2 || typed.Schema.Version != 1 {
			t.Errorf("restored schema %+v, want id 2 version 1", typed.Schema)
		}
		v, _ := format.AvroNative(typed)
		if v.(map[string]any)["f1"] != fmt.Sprintf("v%d", i) {
			t.Errorf("value %d: %v", i, v)
		}
		raw, err := c.EncodeRaw(ctx, "s3_topic-value", schema, typed.Raw)
		if err != nil || !bytes.Equal(raw, out) {
			t.Errorf("EncodeRaw differs from Encode: %v", err)
		}
	}
	// An existing registration is found by lookup, not registered again.
	c2, _ := NewAvro(Config{SchemaRegistryURL: target.URL()})
	if _, err := c2.Encode(ctx, "s3_topic-value", schema, map[string]any{"f1": "x"}); err != nil {
		t.Fatal(err)
	}
	if n := target.Requests("POST", "/subjects/s3_topic-value/versions"); n != 1 {
		t.Errorf("second converter registered again (%d)", n)
	}
	if _, err := c.Encode(ctx, "s3_topic-value", schema, map[string]any{"f1": 3}); !errors.Is(err, format.ErrBadAvro) {
		t.Errorf("bad value: %v", err)
	}
	if _, err := c.EncodeRaw(ctx, "s3_topic-value", schema, []byte{9}); !errors.Is(err, format.ErrBadAvro) {
		t.Errorf("bad raw: %v", err)
	}
}

const orderEnvelope = `{"schema":{"type":"struct","name":"shop.Order","optional":false,"version":3,"fields":[
 {"field":"id","type":"int64","optional":false},
 {"field":"qty","type":"int16","optional":false},
 {"field":"small","type":"int8","optional":true},
 {"field":"name","type":"string","optional":false},
 {"field":"note","type":"string","optional":true},
 {"field":"price","type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}},
 {"field":"day","type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Date"},
 {"field":"at","type":"int64","optional":false,"name":"org.apache.kafka.connect.data.Timestamp"},
 {"field":"tod","type":"int32","optional":true,"name":"org.apache.kafka.connect.data.Time"},
 {"field":"ratio","type":"double","optional":false},
 {"field":"score","type":"float","optional":false},
 {"field":"ok","type":"boolean","optional":false},
 {"field":"blob","type":"bytes","optional":true},
 {"field":"tags","type":"array","items":{"type":"string","optional":false},"optional":false},
 {"field":"attrs","type":"map","keys":{"type":"string","optional":false},"values":{"type":"int32","optional":true},"optional":false},
 {"field":"addr","type":"struct","optional":true,"fields":[{"field":"city","type":"string","optional":false}]},
 {"field":"prev","type":"struct","optional":true,"fields":[{"field":"zip","type":"string","optional":false}]}
]},"payload":%s}`

func orderPayload(i int) string {
	return fmt.Sprintf(`{"id":%d,"qty":%d,"small":null,"name":"order %d","note":null,"price":"ATA=","day":19000,"at":1700000000123,
"tod":%d,"ratio":0.25,"score":1.5,"ok":true,"blob":"AAEC","tags":["a","b"],"attrs":{"z":1,"a":null,"m":%d},"addr":{"city":"Oslo"},"prev":null}`,
		i, i%100, i, i*1000, i)
}

func TestJSONConverterEnvelope(t *testing.T) {
	c := NewJSON(Config{SchemasEnable: true})
	ctx := context.Background()
	typed, err := c.Convert(ctx, "orders", false, []byte(fmt.Sprintf(orderEnvelope, orderPayload(7))))
	if err != nil {
		t.Fatal(err)
	}
	if typed.Schema.ID != 0 || typed.Schema.Version != 3 || typed.Raw == nil {
		t.Fatalf("typed %+v", typed.Schema)
	}
	root := typed.Schema.Avro.Root()
	full := root.Name
	if root.Namespace != "" && !strings.Contains(full, ".") {
		full = root.Namespace + "." + full
	}
	if root.Type != "record" || full != "shop.Order" || len(root.Fields) != 17 {
		t.Fatalf("root %s %s.%s with %d fields", root.Type, root.Namespace, root.Name, len(root.Fields))
	}
	for _, want := range []string{`"logicalType":"decimal"`, `"precision":64`, `"scale":2`, `"logicalType":"date"`,
		`"logicalType":"timestamp-millis"`, `"logicalType":"time-millis"`, `"name":"io.confluent.connect.avro.ConnectDefault"`,
		`"name":"io.confluent.connect.avro.ConnectDefault2"`, `"default":null`} {
		if !strings.Contains(typed.Schema.Text, want) {
			t.Errorf("schema lacks %s: %s", want, typed.Schema.Text)
		}
	}
	// Raw decodes to Native.
	var back any
	if _, err := typed.Schema.Avro.Decode(typed.Raw, &back); err != nil {
		t.Fatal(err)
	}
	n := typed.Native.(map[string]any)
	b := back.(map[string]any)
	checks := map[string]any{
		"id": int64(7), "qty": int32(7), "small": nil, "name": "order 7", "note": nil,
		"day":   time.Date(2022, 1, 8, 0, 0, 0, 0, time.UTC),
		"at":    time.UnixMilli(1700000000123).UTC(),
		"tod":   7 * time.Second,
		"ratio": 0.25, "score": float32(1.5), "ok": true, "blob": []byte{0, 1, 2},
	}
	for k, want := range checks {
		if fmt.Sprint(n[k]) != fmt.Sprint(want) || fmt.Sprint(b[k]) != fmt.Sprint(want) {
			t.Errorf("%s: native %v, decoded %v, want %v", k, n[k], b[k], want)
		}
	}
	if p := b["price"].(*big.Rat); p.Cmp(big.NewRat(304, 100)) != 0 { // 0x0130 = 304
		t.Errorf("price %v", p)
	}
	if a := b["attrs"].(map[string]any); len(a) != 3 || a["a"] != nil || a["m"] != int32(7) {
		t.Errorf("attrs %v", a)
	}
	if a := b["addr"].(map[string]any); a["city"] != "Oslo" {
		t.Errorf("addr %v", a)
	}
	// Same schema, same *format.Schema: the Avro writer sees one schema.
	again, err := c.Convert(ctx, "orders", false, []byte(fmt.Sprintf(orderEnvelope, orderPayload(8))))
	if err != nil || again.Schema != typed.Schema {
		t.Fatalf("schema not cached: %v", err)
	}
	// Another converter derives the very same schema text.
	other, _ := NewJSON(Config{SchemasEnable: true}).Convert(ctx, "orders", false, []byte(fmt.Sprintf(orderEnvelope, orderPayload(8))))
	if other.Schema.Text != typed.Schema.Text || !bytes.Equal(other.Raw, again.Raw) {
		t.Error("derivation is not deterministic")
	}
}

// TestJSONConverterToAvroFile: JsonConverter values with schemas are
// written by AvroFormat and read back equal.
func TestJSONConverterToAvroFile(t *testing.T) {
	c := NewJSON(Config{SchemasEnable: true})
	f, err := format.NewAvro(format.AvroConfig{Codec: format.AvroCodecSnappy})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := f.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var want []*format.Typed
	for i := range 50 {
		data := []byte(fmt.Sprintf(orderEnvelope, orderPayload(i)))
		typed, err := c.Convert(context.Background(), "orders", false, data)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, typed)
		if err := w.Write(&format.Record{Topic: "orders", Offset: int64(i), Value: data, ValueTyped: typed}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rr, err := f.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		r, err := rr.Read()
		if errors.Is(err, io.EOF) {
			if i != 50 {
				t.Fatalf("read %d records", i)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(r.Value, want[i].Raw) || r.ValueTyped.Schema.Text != want[i].Schema.Text {
			t.Fatalf("record %d differs", i)
		}
		if id := r.ValueTyped.Native.(map[string]any)["id"]; id != int64(i) {
			t.Fatalf("record %d id %v", i, id)
		}
	}
}

func TestJSONConverterErrorsAndSchemaless(t *testing.T) {
	ctx := context.Background()
	off := NewJSON(Config{SchemasEnable: false})
	if typed, err := off.Convert(ctx, "t", false, []byte(`{"a":1}`)); typed != nil || err != nil {
		t.Errorf("schemas.enable=false: %v, %v", typed, err)
	}
	c := NewJSON(Config{SchemasEnable: true})
	for _, in := range []string{`{"schema":null,"payload":{"a":1}}`, `{"schema":{"type":"string","optional":true},"payload":null}`} {
		if typed, err := c.Convert(ctx, "t", false, []byte(in)); typed != nil || err != nil {
			t.Errorf("%s: %v, %v", in, typed, err)
		}
	}
	if typed, err := c.Convert(ctx, "t", false, nil); typed != nil || err != nil {
		t.Errorf("nil: %v %v", typed, err)
	}
	str := `{"schema":{"type":"string","optional":false},"payload":"hi"}`
	typed, err := c.Convert(ctx, "t", true, []byte(str))
	if err != nil || typed.Native != "hi" || typed.Schema.Text != `"string"` {
		t.Errorf("string: %+v, %v", typed, err)
	}
	bad := map[string]string{
		"json null":       `null`,
		"not json":        `{`,
		"no payload":      `{"schema":{"type":"string"}}`,
		"extra field":     `{"schema":{"type":"string"},"payload":"x","x":1}`,
		"wrong type":      `{"schema":{"type":"int32"},"payload":"x"}`,
		"int8 overflow":   `{"schema":{"type":"int8"},"payload":300}`,
		"required null":   `{"schema":{"type":"struct","fields":[{"field":"a","type":"string"}]},"payload":{"a":null}}`,
		"null payload":    `{"schema":{"type":"string"},"payload":null}`,
		"bad base64":      `{"schema":{"type":"bytes"},"payload":"!!"}`,
		"unknown type":    `{"schema":{"type":"uint8"},"payload":1}`,
		"int map keys":    `{"schema":{"type":"map","keys":{"type":"int32"},"values":{"type":"string"}},"payload":{}}`,
		"bad struct name": `{"schema":{"type":"struct","name":"my-record","fields":[]},"payload":{}}`,
		"dup field":       `{"schema":{"type":"struct","fields":[{"field":"a","type":"string"},{"field":"a","type":"string"}]},"payload":{"a":"x"}}`,
		"decimal places":  `{"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"1"}},"payload":1.25}`,
		"no scale":        `{"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal"},"payload":"AA=="}`,
	}
	for name, in := range bad {
		_, err := c.Convert(ctx, "orders", false, []byte(in))
		if !errors.Is(err, ErrBadData) || !strings.Contains(err.Error(), `"orders" value`) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A numeric decimal (decimal.format=NUMERIC) and a default.
	num := `{"schema":{"type":"struct","fields":[{"field":"d","type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}},{"field":"n","type":"int32","default":5}]},"payload":{"d":12.5}}`
	typed, err = c.Convert(ctx, "t", false, []byte(num))
	if err != nil {
		t.Fatal(err)
	}
	m := typed.Native.(map[string]any)
	if m["d"].(*big.Rat).Cmp(big.NewRat(25, 2)) != 0 || m["n"] != int32(5) {
		t.Errorf("numeric decimal / default: %v", m)
	}
}

func TestNewAndRaw(t *testing.T) {
	for _, k := range []Kind{KindString, KindByteArray} {
		c, err := New(Config{Kind: k})
		if err != nil {
			t.Fatal(err)
		}
		if typed, err := c.Convert(context.Background(), "t", false, []byte("x")); typed != nil || err != nil {
			t.Errorf("%v: %v %v", k, typed, err)
		}
	}
	if c, err := New(Config{Kind: KindJSON, SchemasEnable: true}); err != nil || c.(*JSONConverter) == nil {
		t.Errorf("json: %v", err)
	}
	if SubjectName("t", true) != "t-key" || SubjectName("t", false) != "t-value" {
		t.Error("SubjectName")
	}
	if !bytes.Equal(AppendWireHeader(nil, 258), []byte{0, 0, 0, 1, 2}) {
		t.Error("AppendWireHeader")
	}
}

func TestAvroConvertConcurrent(t *testing.T) {
	reg := startRegistry(t, srfake.Config{})
	id, _, _ := reg.Register("t-value", "", quickstartSchema)
	c, err := NewAvro(Config{SchemaRegistryURL: reg.URL()})
	if err != nil {
		t.Fatal(err)
	}
	data := wire(t, id, quickstartSchema, map[string]any{"f1": "x"})
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			var err error
			for range 50 {
				if _, err = c.Convert(context.Background(), "t", false, data); err != nil {
					break
				}
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := reg.Requests("GET", fmt.Sprintf("/schemas/ids/%d", id)); n < 1 || n > 8 {
		t.Errorf("%d schema fetches for 400 conversions", n)
	}
}

// FuzzJSONConverter: any input gives a value or an error, never a panic;
// a value's Raw decodes under its schema.
func FuzzJSONConverter(f *testing.F) {
	f.Add([]byte(fmt.Sprintf(orderEnvelope, orderPayload(1))))
	f.Add([]byte(`{"schema":{"type":"array","items":{"type":"map","keys":{"type":"string"},"values":{"type":"int64","optional":true}}},"payload":[{"a":1,"b":null}]}`))
	f.Add([]byte(`{"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"3"}},"payload":"AQID"}`))
	c := NewJSON(Config{SchemasEnable: true})
	f.Fuzz(func(t *testing.T, data []byte) {
		typed, err := c.Convert(context.Background(), "t", false, data)
		if err != nil || typed == nil {
			return
		}
		var v any
		rest, err := typed.Schema.Avro.Decode(typed.Raw, &v)
		if err != nil || len(rest) != 0 {
			t.Fatalf("Raw does not decode: %v", err)
		}
	})
}

// TestValidAvroName: validAvroName accepts exactly the dot-separated Avro
// names the regular expression of the Avro spec describes.
func TestValidAvroName(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)
	for _, s := range []string{"", "a", "_", "A1", "1a", "a.b", "a..b", ".a", "a.", "a.1", "a_b.C_d9", "é", "a b", "a\n", "a-b", "io.confluent.connect.avro.ConnectDefault2"} {
		if got, want := validAvroName(s), re.MatchString(s); got != want {
			t.Errorf("validAvroName(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestAvroEncodeConcurrentRegistersOnce: values of one schema encoded at
// once by many goroutines (a restore loads several objects ahead) share
// one lookup and one registration.
func TestAvroEncodeConcurrentRegistersOnce(t *testing.T) {
	target := startRegistry(t, srfake.Config{})
	c, err := NewAvro(Config{SchemaRegistryURL: target.URL()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	schema := &format.Schema{ID: 1, Avro: avro.MustParse(quickstartSchema), Text: quickstartSchema}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Go(func() {
			if _, err := c.Encode(ctx, "s3_topic-value", schema, map[string]any{"f1": fmt.Sprintf("v%d", i)}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := target.Requests("POST", "/subjects/s3_topic-value/versions"); n != 1 {
		t.Errorf("registered %d times, want 1", n)
	}
	if n := target.Requests("POST", "/subjects/s3_topic-value"); n != 1 {
		t.Errorf("looked up %d times, want 1", n)
	}
}
