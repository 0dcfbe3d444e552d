//go:build race

package kv

// raceEnabled skips the slowest tests under the race detector, which also
// turns on Pebble's invariant checks.
const raceEnabled = true
