package schemas

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/internal/srfake"
)

func schemaOf(id int, text string, subjects ...index.SubjectVersion) index.Schema {
	return index.Schema{V: index.SchemaVersion, ID: id, Type: index.SchemaAvro, Text: text, Subjects: subjects}
}

// TestRegistrarSubjects: TopicNameStrategy subjects follow the topic,
// other subjects are kept, a schema listed under none goes under the
// target's value subject; references first; a dry run registers nothing.
func TestRegistrarSubjects(t *testing.T) {
	ctx := context.Background()
	reg, err := srfake.Start(srfake.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	for _, s := range []string{`"int"`, `"long"`, `"float"`} { // other ids first
		if _, _, err := reg.Register("x-"+s, "", s); err != nil {
			t.Fatal(err)
		}
	}
	cl, err := sr.NewClient(sr.URLs(reg.URL()))
	if err != nil {
		t.Fatal(err)
	}
	addr := schemaOf(2, `{"type":"record","name":"A","namespace":"a","fields":[]}`, index.SubjectVersion{Subject: "a.A", Version: 1})
	ship := schemaOf(9, `{"type":"record","name":"S","fields":[{"name":"a","type":"a.A"}]}`,
		index.SubjectVersion{Subject: "other-value", Version: 4}, index.SubjectVersion{Subject: "orders-value", Version: 2})
	ship.References = []index.SchemaReference{{Name: "a.A", Subject: "a.A", Version: 1, ID: 2}}
	rns := schemaOf(11, `{"type":"record","name":"R","fields":[]}`, index.SubjectVersion{Subject: "com.acme.R", Version: 1})
	bare := schemaOf(12, `"string"`)
	topics := []Topic{{Source: "orders", Target: "copy", Schemas: []index.Schema{addr, ship, rns, bare}}}

	g := NewRegistrar(cl, "")
	plan, err := g.Register(ctx, topics, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Entries) != 4 || plan.Map("copy") != nil && len(plan.Map("copy")) != 0 {
		t.Errorf("dry run: %+v, map %v", plan.Entries, plan.Map("copy"))
	}
	if n := reg.Requests("POST", "/subjects/copy-value/versions") + reg.Requests("POST", "/subjects/a.A/versions"); n != 0 {
		t.Errorf("the dry run registered %d schemas", n)
	}
	plan, err = g.Register(ctx, topics, false)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"a.A": 2, "copy-value": 9, "com.acme.R": 11}
	for _, e := range plan.Entries {
		if e.SourceID == 12 && e.Subject != "copy-value" {
			t.Errorf("a schema without subjects went under %q", e.Subject)
		}
		if w, ok := want[e.Subject]; ok && w == e.SourceID {
			delete(want, e.Subject)
		}
	}
	if len(want) != 0 {
		t.Errorf("entries %+v lack %v", plan.Entries, want)
	}
	if plan.Entries[0].SourceID != 2 {
		t.Errorf("the reference was not registered first: %+v", plan.Entries)
	}
	m := plan.Map("copy")
	for _, id := range []int{2, 9, 11, 12} {
		if m[id].ID == 0 || m[id].ID == id {
			t.Errorf("map %v: id %d", m, id)
		}
	}
	ss, err := cl.SchemaByVersion(ctx, "copy-value", 1)
	if err != nil || ss.ID != m[9].ID || len(ss.References) != 1 || ss.References[0].Subject != "a.A" {
		t.Errorf("copy-value version 1: %+v, %v", ss, err)
	}
}

// TestRegistrarKeepRefused: with IDsKeep a target whose subject holds the
// schema under another id is refused, naming the subject and the ids.
func TestRegistrarKeepRefused(t *testing.T) {
	ctx := context.Background()
	reg, err := srfake.Start(srfake.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	if _, _, err := reg.Register("copy-value", "", `"string"`); err != nil {
		t.Fatal(err)
	}
	cl, _ := sr.NewClient(sr.URLs(reg.URL()))
	topics := []Topic{{Source: "orders", Target: "copy", Schemas: []index.Schema{schemaOf(40, `"string"`, index.SubjectVersion{Subject: "orders-value", Version: 1})}}}
	for _, dry := range []bool{true, false} {
		_, err = NewRegistrar(cl, IDsKeep).Register(ctx, topics, dry)
		if !errors.Is(err, ErrRegistry) || !strings.Contains(err.Error(), `subject "copy-value" already holds schema id 40 of the archive under id 1`) {
			t.Errorf("keep (dry run %v): %v", dry, err)
		}
	}
}
