//go:build !linux

package index

// lowerThreadPriority does nothing where a priority is the whole
// process's: lowering it would slow the searches too.
func lowerThreadPriority(int) {}
