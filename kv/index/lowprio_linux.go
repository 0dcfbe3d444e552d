package index

import "syscall"

// lowerThreadPriority sets the calling thread's nice value to nice. On
// Linux a priority is a thread's own; raising nice needs no privilege, and
// a refusal leaves the thread as it was.
func lowerThreadPriority(nice int) {
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), nice)
}
