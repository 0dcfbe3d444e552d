package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"aead.dev/minisign"

	"github.com/rappel-ca/rappel/plugins"
	"github.com/rappel-ca/rappel/plugins/plugintest"
)

// mustPluginHost returns an open plugin host running guests in this
// process: this test binary does not serve as the child process a run
// uses otherwise (plugintest.ServeChild).
func mustPluginHost(tb testing.TB) *plugins.Host {
	tb.Helper()
	h := plugins.NewHost()
	h.InProcess = true
	h.Logger = slog.New(slog.DiscardHandler)
	if err := h.Open(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { h.Close(context.Background()) })
	return h
}

// uploadNode is a server taking plugin uploads into a real registry's
// plugins dir, which a test may open again (a restart).
type uploadNode struct {
	t    *testing.T
	host *plugins.Host
	dir  string
	tune func(*plugins.Registry)
	reg  *plugins.Registry
	s    *Server
	url  string
}

// newUploadNode opens a registry bundling the shipped hcdump plugin on a
// new plugins dir, tuned by tune, behind a real edge.Server wired as the
// server's command wires it.
func newUploadNode(t *testing.T, tune func(*plugins.Registry)) *uploadNode {
	t.Helper()
	n := &uploadNode{t: t, host: mustPluginHost(t), dir: t.TempDir(), tune: tune}
	n.restart()
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	s.AdminKey = testAdminKey
	s.Plugins = func() any { return n.reg.Report() }
	s.UploadStaging = filepath.Join(n.dir, plugins.StagingDir)
	s.UploadPlugin = func(ctx context.Context, source, wasm, sig string) (string, error) {
		return n.reg.Upload(ctx, source, wasm, sig)
	}
	// What the server's command does for a source no manifest added.
	s.RemoveSource = func(_ context.Context, source, _ string) error {
		if k, err := n.reg.DropRefused(source); k > 0 || err != nil {
			return err
		}
		if n.reg.Active(source) != "" {
			return ErrBundledSource
		}
		return ErrUnknownSource
	}
	n.s, n.url = s, MustHTTP(t, s.Handler()).URL
	return n
}

// restart closes the node's registry, if open, and opens a new one on the
// same plugins dir.
func (n *uploadNode) restart() {
	n.t.Helper()
	if n.reg != nil {
		n.reg.Close()
	}
	r := plugins.NewRegistry(n.host, map[string][]byte{"hcdump": plugintest.Build(n.t, "./plugins/hcdump/wasm")})
	r.Dir, r.Logger = n.dir, slog.New(slog.DiscardHandler)
	if n.tune != nil {
		n.tune(r)
	}
	if err := r.Open(context.Background()); err != nil {
		n.t.Fatal(err)
	}
	n.t.Cleanup(func() { r.Close() })
	n.reg = r
}

// multipartUpload is the body of an upload of wasm and its signature (nil
// for none), and its content type.
func multipartUpload(wasm, sig []byte) ([]byte, string) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	part, _ := mw.CreateFormFile("plugin", "plugin.wasm")
	part.Write(wasm)
	if sig != nil {
		part, _ = mw.CreateFormFile("signature", "plugin.wasm.minisig")
		part.Write(sig)
	}
	mw.Close()
	return b.Bytes(), mw.FormDataContentType()
}

// put uploads wasm and sig for source, its body whole and its length
// declared.
func (n *uploadNode) put(source string, wasm, sig []byte) (int, http.Header, string) {
	n.t.Helper()
	body, ct := multipartUpload(wasm, sig)
	req, _ := http.NewRequest(http.MethodPut, n.url+"/admin/plugins/"+source, bytes.NewReader(body))
	req.Header.Set("Content-Type", ct)
	req.Header.Set("X-Admin-Key", testAdminKey)
	return n.do(req)
}

// remove sends DELETE /admin/plugins/{source} with a reason.
func (n *uploadNode) remove(source string) (int, string) {
	n.t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, n.url+"/admin/plugins/"+source, strings.NewReader(`{"reason": "diagnosed"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Admin-Key", testAdminKey)
	code, _, body := n.do(req)
	return code, body
}

func (n *uploadNode) do(req *http.Request) (int, http.Header, string) {
	n.t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		n.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

// report is GET /admin/plugins.
func (n *uploadNode) report() plugins.Report {
	n.t.Helper()
	code, body := adminDo(n.t, http.MethodGet, n.url+"/admin/plugins", testAdminKey)
	var rep plugins.Report
	if err := json.Unmarshal([]byte(body), &rep); code != 200 || err != nil {
		n.t.Fatalf("GET /admin/plugins = %d %s", code, body)
	}
	return rep
}

// files lists the names in the plugins dir's subdirectory sub ("" for the
// dir itself), directories left out.
func (n *uploadNode) files(sub string) []string {
	n.t.Helper()
	entries, err := os.ReadDir(filepath.Join(n.dir, sub))
	if err != nil {
		n.t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

// TestServer_UploadRefusedKept: uploads refused for their signature, for
// want of a manifest and by their trial leave the plugins dir for
// refused/, with their signature, and GET /admin/plugins lists them (name,
// size, when, why); a registry opened again on the dir does not try them
// again and still lists them; DELETE /admin/plugins/{source} deletes them,
// for an unknown source too, then answers as before.
func TestServer_UploadRefusedKept(t *testing.T) {
	pub, priv, err := minisign.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := pub.MarshalText()
	v, err := plugins.ParseTrustedKeys(text)
	if err != nil {
		t.Fatal(err)
	}
	n := newUploadNode(t, func(r *plugins.Registry) { r.Verify = v.Verify })
	if _, err := n.reg.Prime(context.Background(), "hcdump", os.DirFS(filepath.Join(plugintest.ModuleRoot(t), "testdata", "hc"))); err != nil {
		t.Fatal(err)
	}
	sign := func(source string, wasm []byte) []byte {
		return plugins.Sign(priv, source+".wasm", source, wasm, time.Now())
	}
	upper := plugintest.Build(t, "./plugins/testdata/guests/upper")
	fatal := plugintest.Build(t, "./plugins/testdata/guests/fatal")

	for _, c := range []struct {
		source    string
		wasm, sig []byte
		why       string
	}{
		{"hcdump", upper, nil, "failed verification"},
		{"openfda", upper, sign("openfda", upper), "carries no manifest"},
		{"hcdump", fatal, sign("hcdump", fatal), "its run on the last good payload failed"},
	} {
		code, _, body := n.put(c.source, c.wasm, c.sig)
		if code != 422 || !strings.Contains(body, c.why) {
			t.Fatalf("upload for %s refused with %q: %d %s", c.source, c.why, code, body)
		}
	}
	if left := n.files(""); len(left) != 0 {
		t.Errorf("the plugins dir still holds %v after the refusals", left)
	}
	if left := n.files(plugins.StagingDir); len(left) != 0 {
		t.Errorf("the staging dir still holds %v", left)
	}
	check := func(when string) {
		t.Helper()
		got := n.report().Refused
		if len(got) != 3 {
			t.Fatalf("%s: refused = %+v, want the 3 refusals", when, got)
		}
		for i, want := range []struct {
			source string
			wasm   []byte
			why    string
		}{{"hcdump", fatal, "run on the last good payload failed"}, {"openfda", upper, "carries no manifest"}, {"hcdump", upper, "failed verification"}} {
			rp := got[i]
			if rp.Source != want.source || rp.SHA256 != plugins.SHA256(want.wasm) || rp.Size != int64(len(want.wasm)) || rp.At.IsZero() || !strings.Contains(rp.Why, want.why) {
				t.Errorf("%s: refused[%d] = %+v, want %s's %q", when, i, rp, want.source, want.why)
			}
			kept, err := os.ReadFile(filepath.Join(n.dir, plugins.RefusedDir, rp.File))
			if err != nil || plugins.SHA256(kept) != rp.SHA256 {
				t.Errorf("%s: refused/%s is not the module refused: %v", when, rp.File, err)
			}
			_, err = os.Stat(filepath.Join(n.dir, plugins.RefusedDir, rp.File+plugins.SignatureSuffix))
			if signed := i < 2; signed != (err == nil) {
				t.Errorf("%s: refused/%s's signature kept: %v, want %v", when, rp.File, err == nil, signed)
			}
		}
	}
	check("after the uploads")

	n.restart()
	rep := n.report()
	for _, e := range rep.History {
		t.Errorf("after a restart the registry tried a refused plugin again: %+v", e)
	}
	for _, src := range rep.Sources {
		if len(src.Candidates) != 0 {
			t.Errorf("after a restart %s has candidates %+v", src.Source, src.Candidates)
		}
	}
	check("after a restart")

	if code, body := n.remove("openfda"); code != 200 {
		t.Fatalf("DELETE of a source known only for its refused upload: %d %s", code, body)
	}
	if code, body := n.remove("hcdump"); code != 200 {
		t.Fatalf("DELETE of a bundled source's refused uploads: %d %s", code, body)
	}
	if got := n.report().Refused; len(got) != 0 {
		t.Errorf("refused after the DELETEs = %+v", got)
	}
	if left := n.files(plugins.RefusedDir); len(left) != 0 {
		t.Errorf("refused/ still holds %v", left)
	}
	if code, body := n.remove("openfda"); code != 404 || !strings.Contains(body, "nor a refused plugin") {
		t.Errorf("DELETE with nothing left to delete: %d %s", code, body)
	}
	if code, body := n.remove("hcdump"); code != 400 || !strings.Contains(body, "bundles") {
		t.Errorf("DELETE of a bundled source with nothing refused: %d %s", code, body)
	}
}

// TestServer_RefusedBound: refused/ keeps at most RefusedMax uploads and
// RefusedMaxBytes, the oldest deleted first, the newest listed first.
func TestServer_RefusedBound(t *testing.T) {
	const size = 1000
	n := newUploadNode(t, func(r *plugins.Registry) { r.RefusedMax, r.RefusedMaxBytes = 2, 2.5*size })
	garbage := func(i, size int) []byte { return []byte(fmt.Sprintf("%0*d", size, i)) }
	for i := range 3 {
		if code, _, body := n.put("hcdump", garbage(i, size), nil); code != 422 {
			t.Fatalf("upload %d: %d %s", i, code, body)
		}
	}
	got := n.report().Refused
	if len(got) != 2 || got[0].SHA256 != plugins.SHA256(garbage(2, size)) || got[1].SHA256 != plugins.SHA256(garbage(1, size)) {
		t.Fatalf("refused = %+v, want the last two uploads, newest first", got)
	}
	if kept := n.files(plugins.RefusedDir); len(kept) != 4 { // a module and its record each
		t.Errorf("refused/ holds %v, want the two newest", kept)
	}
	if code, _, body := n.put("hcdump", garbage(3, 2*size), nil); code != 422 {
		t.Fatalf("the large upload: %d %s", code, body)
	}
	got = n.report().Refused
	if len(got) != 1 || got[0].SHA256 != plugins.SHA256(garbage(3, 2*size)) {
		t.Errorf("refused = %+v, want only the large upload: with any other, more than %d bytes", got, int(2.5*size))
	}
	if kept := n.files(plugins.RefusedDir); len(kept) != 2 {
		t.Errorf("refused/ holds %v, want the large upload alone", kept)
	}
}

// slowUpload is an upload whose body arrives 1 KiB every 100 ms, without
// a declared length, until it is finished or cut.
type slowUpload struct {
	pw     *io.PipeWriter
	mw     *multipart.Writer
	stop   chan bool // true finishes the body, false cuts it
	result chan int
}

func (n *uploadNode) startSlow(source string) *slowUpload {
	pr, pw := io.Pipe()
	u := &slowUpload{pw: pw, mw: multipart.NewWriter(pw), stop: make(chan bool), result: make(chan int, 1)}
	go func() {
		part, _ := u.mw.CreateFormFile("plugin", source+".wasm")
		for {
			select {
			case finish := <-u.stop:
				if !finish {
					pw.CloseWithError(io.ErrUnexpectedEOF)
					return
				}
				u.mw.Close()
				pw.Close()
				return
			case <-time.After(100 * time.Millisecond):
				if _, err := part.Write(bytes.Repeat([]byte("w"), 1024)); err != nil {
					return
				}
			}
		}
	}()
	req, _ := http.NewRequest(http.MethodPut, n.url+"/admin/plugins/"+source, pr)
	req.Header.Set("Content-Type", u.mw.FormDataContentType())
	req.Header.Set("X-Admin-Key", testAdminKey)
	go func() {
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			u.result <- 0
			return
		}
		res.Body.Close()
		u.result <- res.StatusCode
	}()
	return u
}

// inFlight is how many uploads the server takes now, and their bytes.
func (n *uploadNode) inFlight() (int, int64) {
	b := &n.s.uploads
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n, b.bytes
}

// waitInFlight waits until the server takes k uploads.
func (n *uploadNode) waitInFlight(k int) {
	n.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if got, _ := n.inFlight(); got == k {
			return
		}
		if time.Now().After(deadline) {
			got, bytes := n.inFlight()
			n.t.Fatalf("the server takes %d uploads (%d bytes), want %d", got, bytes, k)
		}
	}
}

// TestServer_UploadBudget: with two slow uploads arriving, a third is a
// 503 with Retry-After and a sentence saying the node takes others; with
// one arriving, an upload that would take the bytes in flight past
// UploadBytes is refused alike; once the slow ones ended (one finished,
// one cut), their room is back, and no staged file is left.
func TestServer_UploadBudget(t *testing.T) {
	n := newUploadNode(t, nil)
	setBytes := func(limit int64) {
		n.s.uploads.mu.Lock() // the handlers read it under this lock
		n.s.UploadBytes = limit
		n.s.uploads.mu.Unlock()
	}
	setBytes(1 << 30)
	refused := func(what, sentence string) {
		t.Helper()
		code, h, body := n.put("hcdump", []byte("not a module"), nil)
		if code != 503 || h.Get("Retry-After") != "30" || !strings.Contains(body, sentence) {
			t.Errorf("%s: %d Retry-After %q %s", what, code, h.Get("Retry-After"), body)
		}
	}
	a, b := n.startSlow("hcdump"), n.startSlow("vrdb")
	n.waitInFlight(2)
	refused("a third upload", "This node is taking 2 other plugin uploads, as many as it takes at once; retry in 30 s (Retry-After).")

	b.stop <- false
	if code := <-b.result; code != 0 && code != 400 {
		t.Errorf("the upload cut short: %d", code)
	}
	n.waitInFlight(1)
	setBytes(maxUploadBody + 100) // room for the slow upload's largest body, and 100 bytes
	refused("an upload past the bytes", "would take it past the 65.0 MiB it takes at once")

	a.stop <- true
	if code := <-a.result; code != 422 {
		t.Errorf("the slow upload, whole: %d, want its refusal as not a module", code)
	}
	if k, bytes := n.inFlight(); k != 0 || bytes != 0 {
		t.Errorf("after the uploads ended the server still counts %d uploads, %d bytes", k, bytes)
	}
	if code, _, body := n.put("hcdump", []byte("not a module"), nil); code != 422 {
		t.Errorf("an upload once the others ended: %d %s", code, body)
	}
	if left := n.files(plugins.StagingDir); len(left) != 0 {
		t.Errorf("the staging dir still holds %v", left)
	}
}
