package index

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/s3store"
)

func testSchema() Schema {
	return Schema{V: SchemaVersion, ID: 12, Type: SchemaAvro, Text: `{"type":"record","name":"S","fields":[{"name":"to","type":"a.A"}]}`,
		Subjects:   []SubjectVersion{{"orders-value", 3}, {"legacy", 1}},
		References: []SchemaReference{{Name: "a.A", Subject: "a.A", Version: 1, ID: 4}}}
}

func TestSchemaEncodeDecode(t *testing.T) {
	s := testSchema()
	data, err := EncodeSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"v":1,"id":12,"type":"AVRO","subjects":[{"subject":"legacy","version":1},{"subject":"orders-value","version":3}],` +
		`"references":[{"name":"a.A","subject":"a.A","version":1,"id":4}],"schema":"{\"type\":\"record\",\"name\":\"S\",\"fields\":[{\"name\":\"to\",\"type\":\"a.A\"}]}"}` + "\n"
	if string(data) != want {
		t.Errorf("EncodeSchema =\n%s\nwant\n%s", data, want)
	}
	dir := SchemaTopicDir("_kafkas3/", "orders")
	key := SchemaKey("_kafkas3/", "orders", 12, data)
	if !strings.HasPrefix(key, "_kafkas3/schemas/orders/0000000012-") || !strings.HasSuffix(key, ".json") {
		t.Errorf("key %s", key)
	}
	got, err := DecodeSchema(dir, key, data)
	if err != nil {
		t.Fatal(err)
	}
	if got.Subject("orders") != "orders-value" || got.VersionOf("legacy") != 1 || got.ID != 12 {
		t.Errorf("decoded %+v", got)
	}
	for name, bad := range map[string]struct{ key, data string }{
		"digest":  {key, strings.Replace(string(data), `"id":4`, `"id":5`, 1)},
		"id":      {SchemaKey("_kafkas3/", "orders", 13, data), string(data)},
		"unknown": {"", strings.Replace(string(data), `{"v":1,`, `{"v":1,"x":2,`, 1)},
		"version": {"", strings.Replace(string(data), `{"v":1,`, `{"v":2,`, 1)},
		"type":    {"", strings.Replace(string(data), `"AVRO"`, `"XML"`, 1)},
		"twice":   {"", string(data) + string(data)},
		"name":    {dir + "12.json", string(data)},
	} {
		k := bad.key
		if k == "" {
			k = SchemaKey("_kafkas3/", "orders", 12, []byte(bad.data))
		}
		if _, err := DecodeSchema(dir, k, []byte(bad.data)); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), k) {
			t.Errorf("%s: %v, want ErrMalformed naming %s", name, err, k)
		}
	}
}

func TestLoadSchemasMergesAndRefusesConflicts(t *testing.T) {
	ctx := context.Background()
	st := s3store.NewMemory()
	put := func(s Schema) string {
		t.Helper()
		data, err := EncodeSchema(s)
		if err != nil {
			t.Fatal(err)
		}
		k := SchemaKey("p/", "orders", s.ID, data)
		w, err := st.Create(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		return k
	}
	a := testSchema()
	a.Subjects = []SubjectVersion{{"orders-value", 3}}
	put(a)
	b := testSchema() // the registry listed one more subject since
	first := put(b)
	ref := Schema{V: SchemaVersion, ID: 4, Type: SchemaAvro, Text: `{"type":"record","name":"A","namespace":"a","fields":[]}`}
	put(ref)
	got, err := LoadSchemas(ctx, st, "p/", "orders")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != 4 || got[1].ID != 12 || len(got[1].Subjects) != 2 {
		t.Fatalf("LoadSchemas = %+v", got)
	}
	c := testSchema()
	c.Text = `{"type":"string"}`
	second := put(c)
	if _, err := LoadSchemas(ctx, st, "p/", "orders"); !errors.Is(err, ErrSchemaConflict) || !strings.Contains(err.Error(), second) {
		t.Errorf("conflict: %v (keys %s, %s)", err, first, second)
	}
	if got, err := LoadSchemas(ctx, st, "p/", "other"); err != nil || len(got) != 0 {
		t.Errorf("another topic: %v %v", got, err)
	}
}
