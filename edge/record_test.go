package edge

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
)

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// BenchmarkGetRecord serves GET /recall/{record_id} through the whole
// handler (middlewares, router, key check, parameters), logs discarded.
func BenchmarkGetRecord(b *testing.B) {
	s, _ := MustServer(b, MustCatalog(b, testRecords()))
	s.Logger = discardLogger()
	benchmarkRecord(b, s.Handler())
}

// BenchmarkGetRecord_AccessLog is BenchmarkGetRecord with the access log
// encoded as JSON (to io.Discard), as in production.
func BenchmarkGetRecord_AccessLog(b *testing.B) {
	s, _ := MustServer(b, MustCatalog(b, testRecords()))
	s.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	benchmarkRecord(b, s.Handler())
}

// BenchmarkGetRecord_Baseline writes the same bytes from a bare handler: the
// floor that BenchmarkGetRecord is compared with.
func BenchmarkGetRecord_Baseline(b *testing.B) {
	body, _ := MustCatalog(b, testRecords()).Snapshot().RecordJSON("hc-73841", "")
	benchmarkRecord(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
}

func benchmarkRecord(b *testing.B, h http.Handler) {
	r := httptest.NewRequest(http.MethodGet, "/recall/hc-73841", nil)
	r.Header.Set("X-Gateway-Key", testKey)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}

// TestGetRecord_BodyNotAllocatedPerRequest checks that GET
// /recall/{record_id} does not allocate the record's bytes per request: the
// body is spliced into a pooled buffer, so a record of 64 KB served many
// times allocates far less than 64 KB a request (garbage the collector
// would otherwise spend its time on).
func TestGetRecord_BodyNotAllocatedPerRequest(t *testing.T) {
	recs := testRecords()
	recs[0].Translations.EN.HazardDescription = strings.Repeat("Listeria. ", 6400)
	s, _ := MustServer(t, MustCatalog(t, recs))
	s.Logger = discardLogger()
	h := s.Handler()
	r := httptest.NewRequest(http.MethodGet, "/recall/hc-73841", nil)
	r.Header.Set("X-Gateway-Key", testKey)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r) // also fills the pools
	if w.Code != http.StatusOK || w.Body.Len() < 64000 {
		t.Fatalf("GET = %d with %d bytes, want 200 with the 64 KB record", w.Code, w.Body.Len())
	}
	const requests = 50
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range requests {
		h.ServeHTTP(&headerSink{h: http.Header{}}, r)
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / requests; per > 16000 {
		t.Errorf("a request allocated %d bytes, want far less than the record's %d", per, w.Body.Len())
	}
}
