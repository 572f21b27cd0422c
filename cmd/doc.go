// Package cmd holds the cobra commands (sink, source, verify, demo,
// config-keys, version): flags and config files become typed configs for
// archive, restore and verify, errors become exit codes, and signals
// become context cancellation.
package cmd
