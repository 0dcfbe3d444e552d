package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestReadExport reads a whole export and one its server cuts: the
// first is complete (every record, a clean end), the second ends in an
// error, as runExports counts them.
func TestReadExport(t *testing.T) {
	body := strings.Repeat(`{"record_id":"hc-1"}`+"\n", 5000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.Header().Set("Rappel-Count", "5000")
		w.Write([]byte(body[:len(body)/2]))
		if r.URL.Query().Get("cut") != "" {
			http.NewResponseController(w).Flush()
			panic(http.ErrAbortHandler)
		}
		w.Write([]byte(body[len(body)/2:]))
	}))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	whole := readExport(t.Context(), client, srv.URL+"/recall/export", 64<<20)
	if whole.status != http.StatusOK || whole.err != nil || whole.lines != 5000 || whole.count != 5000 || whole.bytes != int64(len(body)) {
		t.Fatalf("whole export: %+v", whole)
	}
	cut := readExport(t.Context(), client, srv.URL+"/recall/export?cut=1", 64<<20)
	if cut.err == nil || cut.lines >= cut.count {
		t.Fatalf("cut export: %+v; want an error and fewer records than announced", cut)
	}
}
