package plugins

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// TestServeChild_OtherABI gives a child the job of a parent from another
// build: the child refuses it before reading the module, and says why in
// its status.
func TestServeChild_OtherABI(t *testing.T) {
	job, _ := json.Marshal(childJob{ABI: "rappel-plugin/0", Name: "probe", WasmSize: 8})
	var status bytes.Buffer
	in := io.MultiReader(bytes.NewReader(append(job, '\n')), strings.NewReader("\x00asm\x01\x00\x00\x00"))
	if code := serveChildOn(context.Background(), in, io.Discard, io.Discard, &status); code != 0 {
		t.Fatalf("exit code %d, want 0 with a status", code)
	}
	var st childStatus
	if err := json.Unmarshal(status.Bytes(), &st); err != nil {
		t.Fatalf("status %q: %v", status.String(), err)
	}
	if !strings.Contains(st.Error, `parent speaks plugin ABI "rappel-plugin/0"`) || !strings.Contains(st.Error, ABIVersion) {
		t.Fatalf("status %+v, want the ABI mismatch", st)
	}
}
