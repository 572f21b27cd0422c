// Package cmd holds the cobra commands: flags and config files become typed
// configs for archive and restore, errors become exit codes, and signals
// become context cancellation.
package cmd
