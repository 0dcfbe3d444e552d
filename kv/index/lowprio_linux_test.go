package index

import (
	"errors"
	"runtime"
	"syscall"
	"testing"
)

// threadNice is the nice value of the calling thread (Linux's
// getpriority answers 20 minus it).
func threadNice(t *testing.T) int {
	t.Helper()
	p, err := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid())
	if err != nil {
		t.Fatal(err)
	}
	return 20 - p
}

func TestLowPriority_LowersItsOwnThreadOnly(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := threadNice(t)
	if before >= refreshNice {
		t.Skipf("the test runs at nice %d already", before)
	}
	var inside int
	want := errors.New("the refresh's error")
	err := lowPriority(func() error {
		inside = threadNice(t)
		return want
	})
	if !errors.Is(err, want) {
		t.Errorf("lowPriority returned %v, want fn's error", err)
	}
	if inside != refreshNice {
		t.Errorf("fn ran at nice %d, want %d", inside, refreshNice)
	}
	if got := threadNice(t); got != before {
		t.Errorf("the caller's thread is at nice %d after, want %d", got, before)
	}
	// A goroutine after it runs on a thread at the normal priority.
	got := make(chan int)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		got <- threadNice(t)
	}()
	if n := <-got; n != before {
		t.Errorf("a later goroutine's thread is at nice %d, want %d", n, before)
	}
}

func TestLowPriority_PanicReachesTheCaller(t *testing.T) {
	defer func() {
		if p := recover(); p != "refresh failed" {
			t.Errorf("recovered %v, want fn's panic", p)
		}
	}()
	_ = lowPriority(func() error { panic("refresh failed") })
	t.Error("lowPriority returned after fn panicked")
}
