// Package feedstest serves upstream feeds for tests: an httptest server
// holding documents in memory, with ETag and Last-Modified (so conditional
// requests get 304), gzip when asked, and faults to inject per path.
package feedstest

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Fault is what a path answers instead of its document.
type Fault struct {
	// Status, when not 0, is answered with a short body.
	Status int
	// Delay is waited before answering (a timeout).
	Delay time.Duration
	// Truncate sends the headers of the whole document and half its body,
	// then closes the connection, whatever the request's conditions.
	Truncate bool
	// Redirect, when set, answers 302 Found to it (a path or a URL).
	Redirect string
}

// Upstream is an httptest server of documents by path.
type Upstream struct {
	*httptest.Server

	mu   sync.Mutex
	docs map[string][]byte
	gz   map[string][]byte // docs compressed, once each
	// preencoded are the paths whose docs are gzip streams already
	// (SetGzip).
	preencoded map[string]bool
	modified   map[string]time.Time
	faults     map[string]Fault
	hits       map[string]int
	paths      []string // requested, in order, since ResetHits
	clock      time.Time
}

// NewUpstream starts an empty upstream on 127.0.0.1, closed when the test
// ends.
func NewUpstream(tb testing.TB) *Upstream {
	tb.Helper()
	u := &Upstream{
		docs:       map[string][]byte{},
		gz:         map[string][]byte{},
		preencoded: map[string]bool{},
		modified:   map[string]time.Time{},
		faults:     map[string]Fault{},
		hits:       map[string]int{},
		clock:      time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
	}
	u.Server = httptest.NewServer(http.HandlerFunc(u.serve))
	tb.Cleanup(u.Close)
	return u
}

// LoadDir serves every file under dir at prefix followed by its path
// relative to dir ("/hc" + "/recalls-en.json").
func (u *Upstream) LoadDir(tb testing.TB, prefix, dir string) {
	tb.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		u.Set(path.Join(prefix, filepath.ToSlash(rel)), b)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// Set serves body at p from now on; its Last-Modified moves.
func (u *Upstream) Set(p string, body []byte) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.clock = u.clock.Add(time.Minute)
	u.docs[p] = body
	delete(u.gz, p)
	delete(u.preencoded, p)
	u.modified[p] = u.clock
}

// SetGzip serves gz, a gzip stream, at p from now on, as the gzip
// encoding of a document that is never held whole: a body far larger
// than what goes on the wire (a gzip bomb). It answers clients that do
// not accept gzip all the same.
func (u *Upstream) SetGzip(p string, gz []byte) {
	u.Set(p, gz)
	u.mu.Lock()
	defer u.mu.Unlock()
	u.gz[p] = gz
	u.preencoded[p] = true
}

// Doc returns the document at p, or nil.
func (u *Upstream) Doc(p string) []byte {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.docs[p]
}

// Delete makes p answer 404.
func (u *Upstream) Delete(p string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.docs, p)
}

// Fail makes p answer f until Heal.
func (u *Upstream) Fail(p string, f Fault) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.faults[p] = f
}

// Heal removes every fault.
func (u *Upstream) Heal() {
	u.mu.Lock()
	defer u.mu.Unlock()
	clear(u.faults)
}

// Hits returns the number of requests for paths starting with prefix since
// the last ResetHits, 304s included.
func (u *Upstream) Hits(prefix string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	n := 0
	for p, c := range u.hits {
		if strings.HasPrefix(p, prefix) {
			n += c
		}
	}
	return n
}

// Requests returns the paths starting with prefix requested since the last
// ResetHits, in the order the requests came.
func (u *Upstream) Requests(prefix string) []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []string
	for _, p := range u.paths {
		if strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	}
	return out
}

// ResetHits sets every count of Hits to zero and forgets Requests.
func (u *Upstream) ResetHits() {
	u.mu.Lock()
	defer u.mu.Unlock()
	clear(u.hits)
	u.paths = nil
}

// compressed returns body gzipped, compressing it once: the upstream's
// work should not weigh on what a benchmark of the client measures.
func (u *Upstream) compressed(p string, body []byte) []byte {
	u.mu.Lock()
	z, ok := u.gz[p]
	u.mu.Unlock()
	if ok {
		return z
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(body)
	zw.Close()
	u.mu.Lock()
	if bytes.Equal(u.docs[p], body) {
		u.gz[p] = buf.Bytes()
	}
	u.mu.Unlock()
	return buf.Bytes()
}

func (u *Upstream) serve(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	p := r.URL.Path
	u.hits[p]++
	u.paths = append(u.paths, p)
	body, ok := u.docs[p]
	mod := u.modified[p]
	f := u.faults[p]
	pre := u.preencoded[p]
	u.mu.Unlock()
	if f.Delay > 0 {
		select {
		case <-time.After(f.Delay):
		case <-r.Context().Done():
			return
		}
	}
	if f.Status != 0 {
		http.Error(w, http.StatusText(f.Status), f.Status)
		return
	}
	if f.Redirect != "" {
		http.Redirect(w, r, f.Redirect, http.StatusFound)
		return
	}
	if !ok {
		http.NotFound(w, r)
		return
	}
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	w.Header().Set("ETag", etag)
	w.Header().Set("Last-Modified", mod.Format(http.TimeFormat))
	if f.Truncate {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		w.Write(body[:len(body)/2])
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
			}
		}
		return
	}
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") || pre {
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(u.compressed(p, body))
		return
	}
	w.Write(body)
}
