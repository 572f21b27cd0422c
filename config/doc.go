// Package config owns every configuration key of kafkas3.
//
// Each key is declared once, in NewKeys (keys.go), as a typed handle
// (StringKey, IntKey, BoolKey, ListKey, ChoiceKey; OtherKey for keys
// kafkas3 only accepts, ignores or refuses) with its name, default, bounds
// or choices, doc, the commands that use it and whether it is a secret.
// The parsers take handles, so reading an undeclared key does not compile.
// The choices of format.class, keys.format.class, headers.format.class,
// partitioner.class and key/value.converter come from the registries of
// packages format, partition and convert. The rules between keys are
// declared once, in rules.go.
//
// Load reads and merges a file (YAML, JSON, Kafka Connect REST JSON or
// .properties), the environment, -p parameters and flags. Settings.Sink
// and Settings.Source type and validate the values, report every problem
// of a configuration in one pass (the load's included), and fill
// archive.Config and restore.Config with the formats, partitioner,
// converters and client options built (TLS from PEM files or from Java
// keystores, JKS or PKCS12: keystore.go; the SASL mechanism from
// sasl.mechanism, its keys and sasl.jaas.config, built by package
// kafkaauth: sasl.go). Settings.Effective lists every key
// with its value and origin for `kafkas3 config`; Reference renders the
// declarations as the Markdown behind `kafkas3 config-keys` and
// docs/config.md.
//
// Values of secret keys, and passwords in URLs, never reach output:
// errors and Effective mask them (Display), and text of other packages'
// errors is scrubbed of them.
package config
