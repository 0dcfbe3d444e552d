package index

import "runtime"

// refreshNice is how far below the searches' priority the index's
// refreshes and merges run: at nice 10 a thread weighs about a tenth of a
// normal one, so a busy core gives the searches nine tenths of its time
// and the refresh the rest, and an idle one gives the refresh all of it.
const refreshNice = 10

// lowPriority runs fn on an operating system thread of its own whose
// scheduling priority is lowered (where the system allows it), and
// returns what fn returns. A refresh is background work: its CPU time,
// on a node with few cores, is taken from the searches running
// meanwhile, and the kernel's scheduler is what decides which thread
// waits.
//
// The thread stays locked to fn's goroutine and so ends with it: lowered,
// it never goes back to run other goroutines. Threads the runtime starts
// meanwhile come from its template thread, not this one, and keep the
// normal priority. A panic in fn is raised again in the caller.
func lowPriority(fn func() error) error {
	type result struct {
		err      error
		panicked any
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		var r result
		defer func() {
			if p := recover(); p != nil {
				r.panicked = p
			}
			done <- r
		}()
		lowerThreadPriority(refreshNice)
		r.err = fn()
	}()
	r := <-done
	if r.panicked != nil {
		panic(r.panicked)
	}
	return r.err
}
