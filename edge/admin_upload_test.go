package edge

import (
	"bytes"
	"errors"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/rappel-ca/rappel"
)

// FuzzReadPluginUpload feeds the upload's multipart reader any body: it
// answers with the parts staged or a client error, never a panic or a 5xx,
// and leaves no staged file behind an error.
func FuzzReadPluginUpload(f *testing.F) {
	f.Add("b", []byte("--b\r\nContent-Disposition: form-data; name=\"plugin\"\r\n\r\n\x00asm\r\n--b--\r\n"))
	f.Add("b", []byte("--b\r\nContent-Disposition: form-data; name=\"plugin\"\r\n\r\nx\r\n--b\r\nContent-Disposition: form-data; name=\"plugin\"\r\n\r\ny\r\n--b--\r\n"))
	f.Add("", []byte("{}"))
	f.Fuzz(func(t *testing.T, boundary string, body []byte) {
		r := httptest.NewRequest("PUT", "/admin/plugins/x", bytes.NewReader(body))
		r.Header.Set("Content-Type", "multipart/form-data; boundary="+boundary)
		dir := t.TempDir()
		up, err := readPluginUpload(r, dir)
		if left, _ := os.ReadDir(dir); err != nil && len(left) > 0 {
			t.Fatalf("a refused body left %d staged files", len(left))
		}
		if err == nil {
			if up.wasm.size == 0 || up.wasm.path == "" {
				t.Fatal("no error and no plugin")
			}
			up.remove()
			return
		}
		var e *rappel.Error
		if !errors.As(err, &e) || e.Code == rappel.EINTERNAL {
			t.Fatalf("not a client error: %v", err)
		}
	})
}
