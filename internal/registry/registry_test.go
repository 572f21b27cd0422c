package registry

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

var (
	errUnknown = errors.New("unknown thing")
	errNotYet  = errors.New("not supported yet")
)

func things() Registry[int, string] {
	return Registry[int, string]{
		Key: "thing.class", What: "thing", Unknown: errUnknown, NotSupported: errNotYet,
		Entries: []Entry[int, string]{
			{Kind: 1, Name: "a", Class: "com.example.AThing", Spec: "spec a"},
			{Kind: 2, Name: "b", Short: []string{"bee"}, Class: "com.example.BThing", Spec: "spec b"},
			{Kind: 3, Name: "c", Class: "com.example.CThing", Unsupported: true},
		},
	}
}

func TestLookup(t *testing.T) {
	r := things()
	for name, want := range map[string]int{
		"a": 1, " A ": 1, "com.example.AThing": 1, "athing": 1, "AThing": 1,
		"b": 2, "bee": 2, "BEE": 2, "com.example.bthing": 2,
	} {
		e, err := r.Lookup(name)
		if err != nil || e.Kind != want {
			t.Errorf("Lookup(%q) = %v, %v; want %d", name, e.Kind, err, want)
		}
	}
	e, err := r.Lookup("CThing")
	if e.Kind != 3 || !errors.Is(err, errNotYet) || !strings.Contains(err.Error(), `thing.class "CThing": the c thing is not supported yet; use a or b`) {
		t.Errorf("unsupported: %v, %v", e.Kind, err)
	}
	for _, name := range []string{"", "d", "com.example.A", "org.example.AThing.x"} {
		e, err := r.Lookup(name)
		if e.Kind != 0 || !errors.Is(err, errUnknown) || !strings.Contains(err.Error(), "thing.class") ||
			!strings.Contains(err.Error(), "a or b") || !strings.Contains(err.Error(), "com.example.AThing") {
			t.Errorf("Lookup(%q) = %v, %v; want unknown naming the key, the choices and a class", name, e.Kind, err)
		}
	}
}

func TestListing(t *testing.T) {
	r := things()
	if got := r.Names(); !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Errorf("Names = %q", got)
	}
	if got := r.Supported(); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("Supported = %q", got)
	}
	if got := r.Entries[1].Aliases(); !reflect.DeepEqual(got, []string{"bee", "com.example.BThing", "BThing"}) {
		t.Errorf("Aliases = %q", got)
	}
	if e, ok := r.Get(2); !ok || e.Spec != "spec b" {
		t.Errorf("Get(2) = %v, %v", e, ok)
	}
	if _, ok := r.Get(9); ok {
		t.Error("Get(9) found an entry")
	}
	f := r.Filter(func(e Entry[int, string]) bool { return e.Kind != 1 })
	if got := f.Names(); !reflect.DeepEqual(got, []string{"b", "c"}) || len(r.Entries) != 3 || f.Key != r.Key {
		t.Errorf("Filter: %q (original %d entries)", got, len(r.Entries))
	}
	if got := f.OneOf(); got != "b" {
		t.Errorf("OneOf = %q", got)
	}
	if _, err := f.Lookup("a"); !errors.Is(err, errUnknown) {
		t.Errorf("filtered out a: %v", err)
	}
}
