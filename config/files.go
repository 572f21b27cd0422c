package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// fileFormat is the syntax of a configuration file.
type fileFormat string

const (
	fileYAML       fileFormat = "YAML"
	fileJSON       fileFormat = "JSON"
	fileProperties fileFormat = "properties"
)

// fileEntry is one setting read from a file. A nil-valued (YAML ~ or JSON
// null) setting has null set: its name is checked, its value is not used.
type fileEntry struct {
	key   string
	value string
	null  bool
}

// readConfigFile reads path and returns its settings as strings, in file
// order. The syntax comes from the extension (.yaml/.yml, .json,
// .properties/.props/.conf); for any other extension it is sniffed: '{'
// starts JSON, a YAML mapping is YAML, anything else is read as properties.
// YAML and JSON may hold flat keys or Kafka Connect's REST shape
// {"name": ..., "config": {...}}.
func readConfigFile(path string) ([]fileEntry, fileFormat, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	return parseConfigData(path, data)
}

func parseConfigData(path string, data []byte) ([]fileEntry, fileFormat, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		e, err := parseYAMLConfig(data)
		return e, fileYAML, err
	case ".json":
		e, err := parseJSONConfig(data)
		return e, fileJSON, err
	case ".properties", ".props", ".conf":
		e, err := propertiesEntries(data)
		return e, fileProperties, err
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		e, err := parseJSONConfig(data)
		return e, fileJSON, err
	}
	var n yaml.Node
	if yaml.Unmarshal(data, &n) == nil && len(n.Content) == 1 && n.Content[0].Kind == yaml.MappingNode {
		e, err := parseYAMLConfig(data)
		return e, fileYAML, err
	}
	e, err := propertiesEntries(data)
	return e, fileProperties, err
}

func propertiesEntries(data []byte) ([]fileEntry, error) {
	props, err := parseProperties(data)
	if err != nil {
		return nil, err
	}
	out := make([]fileEntry, len(props))
	for i, p := range props {
		out[i] = fileEntry{key: p.key, value: p.value}
	}
	return out, nil
}

// errNotFlat reports a nested mapping where a flat value was expected.
var errNotFlat = errors.New("nested values are not supported; write flat dotted keys like s3.bucket.name: value")

// parseYAMLConfig reads a YAML mapping of flat keys. Scalars keep their text
// (so 0003 stays 0003), sequences of scalars are joined with ",", and
// duplicate keys are an error.
func parseYAMLConfig(data []byte) ([]fileEntry, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, nil // empty file
	}
	root := resolveAlias(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: want a mapping of keys to values", root.Line)
	}
	top, err := yamlMapping(root)
	if err != nil {
		return nil, err
	}
	return unwrapREST(top, func(v any) ([]yamlPair, bool, error) {
		n, ok := v.(*yaml.Node)
		if !ok || resolveAlias(n).Kind != yaml.MappingNode {
			return nil, false, nil
		}
		pairs, err := yamlMapping(resolveAlias(n))
		return pairs, true, err
	}, yamlValue)
}

type yamlPair struct {
	key   string
	value any // *yaml.Node or a JSON value
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

func yamlMapping(n *yaml.Node) ([]yamlPair, error) {
	seen := map[string]bool{}
	var out []yamlPair
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := resolveAlias(n.Content[i])
		if k.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("line %d: a key must be a plain string", k.Line)
		}
		if seen[k.Value] {
			return nil, fmt.Errorf("line %d: key %q appears twice", k.Line, k.Value)
		}
		seen[k.Value] = true
		out = append(out, yamlPair{key: k.Value, value: n.Content[i+1]})
	}
	return out, nil
}

// yamlValue turns a YAML value into its string form.
func yamlValue(key string, v any) (fileEntry, error) {
	n := resolveAlias(v.(*yaml.Node))
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return fileEntry{key: key, null: true}, nil
		}
		return fileEntry{key: key, value: n.Value}, nil
	case yaml.SequenceNode:
		parts := make([]string, 0, len(n.Content))
		for _, c := range n.Content {
			c = resolveAlias(c)
			if c.Kind != yaml.ScalarNode || c.Tag == "!!null" {
				return fileEntry{}, fmt.Errorf("%s: line %d: a list may hold only plain values", key, c.Line)
			}
			parts = append(parts, c.Value)
		}
		return fileEntry{key: key, value: strings.Join(parts, ",")}, nil
	default:
		return fileEntry{}, fmt.Errorf("%s: line %d: %w", key, n.Line, errNotFlat)
	}
}

// parseJSONConfig reads a JSON object of flat keys (or Connect's REST
// shape). Numbers keep their text; arrays of scalars are joined with ",".
// Duplicate keys: the last wins, as in Kafka Connect.
func parseJSONConfig(data []byte) ([]fileEntry, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var top map[string]any
	if err := dec.Decode(&top); err != nil {
		return nil, fmt.Errorf("want a JSON object of keys to values: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON object")
	}
	pairs := jsonPairs(top)
	return unwrapREST(pairs, func(v any) ([]yamlPair, bool, error) {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false, nil
		}
		return jsonPairs(m), true, nil
	}, jsonValue)
}

func jsonPairs(m map[string]any) []yamlPair {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]yamlPair, len(keys))
	for i, k := range keys {
		out[i] = yamlPair{key: k, value: m[k]}
	}
	return out
}

func jsonScalar(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}

func jsonValue(key string, v any) (fileEntry, error) {
	if v == nil {
		return fileEntry{key: key, null: true}, nil
	}
	if s, ok := jsonScalar(v); ok {
		return fileEntry{key: key, value: s}, nil
	}
	if list, ok := v.([]any); ok {
		parts := make([]string, 0, len(list))
		for _, e := range list {
			s, ok := jsonScalar(e)
			if !ok {
				return fileEntry{}, fmt.Errorf("%s: a list may hold only plain values", key)
			}
			parts = append(parts, s)
		}
		return fileEntry{key: key, value: strings.Join(parts, ",")}, nil
	}
	return fileEntry{}, fmt.Errorf("%s: %w", key, errNotFlat)
}

// unwrapREST converts the top-level pairs to entries. When there is a
// "config" key holding a mapping, the document is Connect's REST shape:
// settings come from "config", "name" from the top level (they must agree
// when both are set), and "tasks" and "type" are ignored.
func unwrapREST(top []yamlPair, asMap func(any) ([]yamlPair, bool, error), value func(string, any) (fileEntry, error)) ([]fileEntry, error) {
	var cfg []yamlPair
	rest := false
	for _, p := range top {
		if p.key == "config" {
			m, ok, err := asMap(p.value)
			if err != nil {
				return nil, fmt.Errorf("config: %w", err)
			}
			if !ok {
				return nil, errors.New("config: want a mapping of settings (Kafka Connect REST shape)")
			}
			cfg, rest = m, true
		}
	}
	var out []fileEntry
	var errs []error
	if !rest {
		for _, p := range top {
			e, err := value(p.key, p.value)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out = append(out, e)
		}
		return out, errors.Join(errs...)
	}
	var topName *fileEntry
	for _, p := range top {
		switch p.key {
		case "config", "tasks", "type":
		case "name":
			e, err := value(p.key, p.value)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			topName = &e
		default:
			errs = append(errs, fmt.Errorf("%s: unknown top-level key in a Kafka Connect REST document (want name, config)", p.key))
		}
	}
	for _, p := range cfg {
		e, err := value(p.key, p.value)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if e.key == "name" && topName != nil {
			if !e.null && e.value != topName.value {
				errs = append(errs, fmt.Errorf("name: top-level %q and config name %q differ", topName.value, e.value))
			}
			continue
		}
		out = append(out, e)
	}
	if topName != nil {
		out = append(out, *topName)
	}
	return out, errors.Join(errs...)
}
