package kv

import (
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestPebbleLogger_Fatalf checks that a fatal store error says why on
// stderr before the process exits, whatever the log writer buffered: it
// runs the fatal path in a child process and reads its stderr.
func TestPebbleLogger_Fatalf(t *testing.T) {
	if os.Getenv("RAPPEL_TEST_FATAL") != "" {
		// The child: a logger whose writer never flushes.
		pebbleLogger{l: slog.New(slog.NewTextHandler(io.Discard, nil))}.Fatalf("pebble: corruption in %s", "000123.sst")
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPebbleLogger_Fatalf$")
	cmd.Env = append(os.Environ(), "RAPPEL_TEST_FATAL=1")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("the child ended with %v, want exit status 1:\n%s", err, out)
	}
	if !strings.Contains(string(out), "the data store failed and the node stops: pebble: corruption in 000123.sst") {
		t.Fatalf("stderr does not say why:\n%s", out)
	}
}
