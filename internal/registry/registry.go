// Package registry is the one mechanism behind the plug-in tables of
// kafkas3: formats (format.Formats), partitioners (partition.Partitioners)
// and converters (convert.Converters). Each package declares its plug-ins
// once, in a literal table returned by a function, with their names
// (short name, other short names, Confluent's or Connect's class name) and
// a package-specific spec; callers look names up, list them for config
// choices and docs, and read the spec, instead of switching on a kind.
package registry

import (
	"fmt"
	"strings"
)

// Entry is one plug-in: an identifier K (the package's Kind), its names,
// and S, what its package declares about it beyond the names.
type Entry[K comparable, S any] struct {
	// Kind identifies the plug-in in its package.
	Kind K
	// Name is the short name config files and docs use ("json").
	Name string
	// Short lists other short names that are accepted ("bytearray").
	Short []string
	// Class is the Java class name Confluent's or Connect's config uses
	// ("io.confluent.connect.s3.format.json.JsonFormat"); its last
	// segment ("JsonFormat") is accepted too.
	Class string
	// Unsupported marks a plug-in that is recognised but not implemented:
	// Lookup finds it and returns an error.
	Unsupported bool
	// Spec is the package's declaration of the plug-in.
	Spec S
}

// Aliases returns the names other than Name that mean e, in the order docs
// list them: Short, then Class and its last segment.
func (e Entry[K, S]) Aliases() []string {
	out := append([]string(nil), e.Short...)
	if e.Class != "" {
		out = append(out, e.Class)
		if i := strings.LastIndexByte(e.Class, '.'); i >= 0 {
			out = append(out, e.Class[i+1:])
		}
	}
	return out
}

// Matches reports whether name, surrounding space ignored, is Name or one
// of the Aliases, ignoring case.
func (e Entry[K, S]) Matches(name string) bool {
	n := strings.TrimSpace(name)
	if strings.EqualFold(n, e.Name) {
		return true
	}
	for _, a := range e.Aliases() {
		if strings.EqualFold(n, a) {
			return true
		}
	}
	return false
}

// Registry is an ordered table of plug-ins. It is a value: packages build
// it in a function (no package state) and callers may filter it.
type Registry[K comparable, S any] struct {
	// Key is the config key the names are values of, named in errors
	// ("format.class"); "" names none.
	Key string
	// What names a plug-in in errors ("format", "partitioner").
	What string
	// Unknown is wrapped by Lookup errors for names no entry has.
	Unknown error
	// NotSupported is wrapped by Lookup errors for Unsupported entries.
	NotSupported error
	// Entries are the plug-ins, in the order docs list them.
	Entries []Entry[K, S]
}

// Lookup returns the entry name means (see Entry.Matches). For an
// Unsupported entry it returns the entry and an error wrapping
// NotSupported; for an unknown name the zero entry and an error wrapping
// Unknown. Both errors name Key, the value and the supported names.
func (r Registry[K, S]) Lookup(name string) (Entry[K, S], error) {
	for _, e := range r.Entries {
		if !e.Matches(name) {
			continue
		}
		if e.Unsupported {
			return e, fmt.Errorf("%s%q: the %s %s is %w; use %s", r.keyPrefix(), name, e.Name, r.What, r.NotSupported, r.OneOf())
		}
		return e, nil
	}
	var zero Entry[K, S]
	return zero, fmt.Errorf("%w: %s%q; allowed: %s, or their class names such as %s",
		r.Unknown, r.keyPrefix(), name, r.OneOf(), r.firstClass())
}

// Get returns the entry of kind k.
func (r Registry[K, S]) Get(k K) (Entry[K, S], bool) {
	for _, e := range r.Entries {
		if e.Kind == k {
			return e, true
		}
	}
	var zero Entry[K, S]
	return zero, false
}

// Filter returns the registry of the entries keep accepts.
func (r Registry[K, S]) Filter(keep func(Entry[K, S]) bool) Registry[K, S] {
	out := r
	out.Entries = nil
	for _, e := range r.Entries {
		if keep(e) {
			out.Entries = append(out.Entries, e)
		}
	}
	return out
}

// Names returns the Name of each entry, supported or not, in order.
func (r Registry[K, S]) Names() []string {
	out := make([]string, len(r.Entries))
	for i, e := range r.Entries {
		out[i] = e.Name
	}
	return out
}

// Supported returns the Name of each supported entry, in order.
func (r Registry[K, S]) Supported() []string {
	var out []string
	for _, e := range r.Entries {
		if !e.Unsupported {
			out = append(out, e.Name)
		}
	}
	return out
}

func (r Registry[K, S]) keyPrefix() string {
	if r.Key == "" {
		return ""
	}
	return r.Key + " "
}

// OneOf lists the supported names for messages: "a, b or c".
func (r Registry[K, S]) OneOf() string {
	names := r.Supported()
	switch len(names) {
	case 0:
		return "none"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func (r Registry[K, S]) firstClass() string {
	for _, e := range r.Entries {
		if !e.Unsupported && e.Class != "" {
			return e.Class
		}
	}
	return "none"
}
