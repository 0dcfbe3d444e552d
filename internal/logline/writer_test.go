package logline

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rappel-ca/rappel/internal/logtest"
)

func TestWriter(t *testing.T) {
	t.Run("Buffers", func(t *testing.T) {
		out := &logtest.Buffer{}
		l := NewWriterEvery(out, time.Hour)
		fmt.Fprintln(l, "one line")
		if got := out.String(); got != "" {
			t.Fatalf("written by Write itself: %q", got)
		}
		l.Close()
		if got := out.String(); got != "one line\n" {
			t.Fatalf("after Close: %q", got)
		}
	})
	t.Run("FlushesPeriodically", func(t *testing.T) {
		out := &logtest.Buffer{}
		l := NewWriter(out)
		defer l.Close()
		fmt.Fprintln(l, "one line")
		deadline := time.Now().Add(30 * time.Second)
		for out.String() != "one line\n" {
			if time.Now().After(deadline) {
				t.Fatalf("the periodic flush never wrote the line: %q", out.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	t.Run("CloseWritesTheRest", func(t *testing.T) {
		out := &logtest.Buffer{}
		l := NewWriter(out)
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range 1000 {
					fmt.Fprintf(l, "writer %d line %d\n", i, j)
				}
			}()
		}
		wg.Wait()
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if len(lines) != 8000 {
			t.Fatalf("%d lines written, want 8000", len(lines))
		}
		for _, line := range lines {
			if !strings.HasPrefix(line, "writer ") {
				t.Fatalf("a line was torn: %q", line)
			}
		}
		if err := l.Close(); err != nil { // twice is fine
			t.Fatal(err)
		}
	})
}
