package edge

import (
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// TestServer_SlowUpload: an upload that keeps making progress is read
// whole though it takes longer than the server's read timeout (10 s),
// through the real http.Server; one that stops arriving is a 400 whose
// sentence names no socket address.
func TestServer_SlowUpload(t *testing.T) {
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	s.AdminKey = testAdminKey
	s.Plugins = mustPluginsReport(t)
	got := make(chan int, 1)
	s.UploadStaging = t.TempDir()
	s.UploadPlugin = func(_ context.Context, _ string, wasm, _ string) (string, error) {
		info, err := os.Stat(wasm)
		if err != nil {
			return "", err
		}
		got <- int(info.Size())
		return PluginHeld, nil
	}
	hs := s.HTTPServer("127.0.0.1:0")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	url := "http://" + ln.Addr().String() + "/admin/plugins/hcdump"

	put := func(chunks int, every time.Duration, stall time.Duration) (int, string) {
		pr, pw := io.Pipe()
		mw := multipart.NewWriter(pw)
		go func() {
			part, _ := mw.CreateFormFile("plugin", "hcdump.wasm")
			for i := range chunks {
				if i > 0 {
					time.Sleep(every)
				}
				fmt.Fprint(part, strings.Repeat("w", 1024))
			}
			if stall > 0 {
				time.Sleep(stall)
			}
			mw.Close()
			pw.Close()
		}()
		req, _ := http.NewRequest(http.MethodPut, url, pr)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("X-Admin-Key", testAdminKey)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := put(13, time.Second, 0); code != http.StatusAccepted {
		t.Fatalf("an upload taking 12 s, 1 KiB a second: %d %s", code, body)
	}
	if n := <-got; n != 13*1024 {
		t.Fatalf("the plugin uploaded slowly arrived with %d bytes, want %d", n, 13*1024)
	}
	code, body := put(1, 0, uploadIdle+2*time.Second)
	if code != http.StatusBadRequest || !strings.Contains(body, "stopped arriving") || strings.Contains(body, "127.0.0.1") {
		t.Fatalf("an upload that stalled: %d %s", code, body)
	}
}

// TestServer_NoSniff: every answer, the home page and errors included,
// tells browsers not to guess its type.
func TestServer_NoSniff(t *testing.T) {
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	base := MustHTTP(t, s.Handler()).URL
	for _, path := range []string{"/", "/health", "/recall/nope", "/no-such-route"} {
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s (%d) has no X-Content-Type-Options: nosniff", path, res.StatusCode)
		}
	}
}
