// Package cmd holds the cobra commands (sink, source, verify, ls, cat,
// index, demo, config, config-keys, version): each is a constructor, a
// flags struct and a run function, and each help shows an example of the
// common case (cobra's Example). ls prints what package inspect
// summarises; cat prints, as JSON lines or with a kcat-like format string
// (catwrite.go), the records restore.Records reads. Flags become config.Input (config files, environment and
// -p are read by package config, which fills archive.Config and
// restore.Config); the source's own flags (what to restore, renames, modes)
// are applied to the restore config by sourceFlags.apply and reported with
// the config's problems. Errors become exit codes, and signals become
// context cancellation.
package cmd
