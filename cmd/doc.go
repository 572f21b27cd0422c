// Package cmd holds the cobra commands (sink, source, verify, demo,
// config, config-keys, version): each is a constructor, a flags struct and
// a run function. Flags become config.Input (config files, environment and
// -p are read by package config, which fills archive.Config and
// restore.Config); the source's own flags (what to restore, renames, modes)
// are applied to the restore config by sourceFlags.apply and reported with
// the config's problems. Errors become exit codes, and signals become
// context cancellation.
package cmd
