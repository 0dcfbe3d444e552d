package logline

import (
	"bufio"
	"io"
	"sync"
	"time"
)

// FlushEvery bounds how long a log line waits in Writer's buffer.
const FlushEvery = 100 * time.Millisecond

// Writer buffers the log's lines and writes them out every FlushEvery,
// when the buffer fills, and at Close. Written straight to stderr, every
// access-log line cost the request a write system call, a large part of a
// small read's time under load; buffered, a busy node writes its lines in
// batches. A crash loses at most the last FlushEvery of lines; a shutdown
// loses none.
type Writer struct {
	mu   sync.Mutex
	buf  *bufio.Writer
	stop chan struct{}
	done chan struct{}
}

// NewWriter returns a Writer over out flushing every FlushEvery.
func NewWriter(out io.Writer) *Writer { return NewWriterEvery(out, FlushEvery) }

// NewWriterEvery is NewWriter flushing every d.
func NewWriterEvery(out io.Writer, d time.Duration) *Writer {
	l := &Writer{buf: bufio.NewWriterSize(out, 64<<10), stop: make(chan struct{}), done: make(chan struct{})}
	go l.flushLoop(d)
	return l
}

// Write buffers one or more whole lines (slog writes a line per call).
func (l *Writer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *Writer) flushLoop(d time.Duration) {
	defer close(l.done)
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			l.Flush()
		}
	}
}

// Flush writes out what is buffered. A write error is dropped: there is
// nowhere left to report that the log cannot be written.
func (l *Writer) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	_ = l.buf.Flush()
}

// Close stops the periodic flush and writes out the rest. Lines written
// after Close are still buffered and written by the next Flush or Close.
func (l *Writer) Close() error {
	select {
	case <-l.stop:
	default:
		close(l.stop)
		<-l.done
	}
	l.Flush()
	return nil
}
