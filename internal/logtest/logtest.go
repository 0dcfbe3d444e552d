// Package logtest keeps what a test's loggers write, for the tests that
// read log lines back while the code under test may still be logging from
// other goroutines (a server, a refresher, a child process's stderr). It
// is imported by tests only (internal/importrules holds it to that).
package logtest

import (
	"bytes"
	"strings"
	"sync"
)

// Buffer is an io.Writer that keeps what is written to it, safe for
// concurrent writes and reads; the zero value is ready to use.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p; it never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns all that was written, without taking it.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Take returns the lines written since the last Take that hold want, and
// forgets every line written so far.
func (b *Buffer) Take(want string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out strings.Builder
	for line := range strings.Lines(b.buf.String()) {
		if strings.Contains(line, want) {
			out.WriteString(line)
		}
	}
	b.buf.Reset()
	return out.String()
}
