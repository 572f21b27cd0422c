// Package config owns every configuration key of kafkas3. Each key is
// declared once, in NewKeys, as a typed handle (StringKey, IntKey,
// BoolKey, ListKey, ChoiceKey) with its name, default, bounds or choices,
// doc, the commands that use it and whether it is a secret; the parsers
// take handles, so reading an undeclared key does not compile. Load reads
// and merges a file (YAML, JSON, Kafka Connect REST JSON or .properties),
// the environment, -p parameters and flags; Settings.Sink and
// Settings.Source type and validate the values and report every problem
// of a configuration in one pass. Reference renders the declarations as
// the Markdown reference behind `kafkas3 config-keys` and the README.
package config
