package edge

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkMiddlewareHTTP is BenchmarkMiddleware over real HTTP: a loopback
// server and keep-alive clients, so that the ratio of Chain to Bare is the
// throughput a client sees, net/http's own work included. Run the two
// alternately (-count) and compare their ns/op.
func BenchmarkMiddlewareHTTP(b *testing.B) {
	cat := MustCatalog(b, testRecords())
	b.Run("Chain", func(b *testing.B) {
		s, _ := MustServer(b, cat)
		s.Logger = discardLogger()
		benchmarkRecordHTTP(b, s.Handler())
	})
	// ChainLogged writes the access log, in JSON, as a server does: Chain
	// drops it at the level check.
	b.Run("ChainLogged", func(b *testing.B) {
		s, _ := MustServer(b, cat)
		s.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
		benchmarkRecordHTTP(b, s.Handler())
	})
	b.Run("Bare", func(b *testing.B) {
		body, _ := cat.Snapshot().RecordJSON("hc-73841", "")
		benchmarkRecordHTTP(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(body)
		}))
	})
	// BareSameHeaders is Bare sending the headers the contract gives
	// every answer of the chain (CORS, caching, ETag, request id,
	// nosniff, Vary): the floor of Chain, net/http's writing of those
	// headers and any TCP segment they add included.
	b.Run("BareSameHeaders", func(b *testing.B) {
		s, _ := MustServer(b, cat)
		s.Logger = discardLogger()
		r := httptest.NewRequest(http.MethodGet, "/recall/hc-73841", nil)
		r.Header.Set("X-Gateway-Key", testKey)
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, r)
		header, body := rec.Result().Header, rec.Body.Bytes()
		benchmarkRecordHTTP(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			for k, v := range header {
				h[k] = v
			}
			w.Write(body)
		}))
	})
}

func benchmarkRecordHTTP(b *testing.B, h http.Handler) { benchmarkHTTP(b, h, "/recall/hc-73841") }

// benchmarkHTTP sends GET path to h over loopback from parallel
// keep-alive clients.
func benchmarkHTTP(b *testing.B, h http.Handler, path string) {
	srv := httptest.NewServer(h)
	defer srv.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	url := srv.URL + path
	b.ReportAllocs()
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("X-Gateway-Key", testKey)
		for pb.Next() {
			res, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				b.Errorf("status %d", res.StatusCode)
				return
			}
		}
	})
}

// BenchmarkPageHTTP is BenchmarkMiddlewareHTTP for GET /recall's first
// page of 100 results of the bundle (about 250 KB): the chain against a
// bare handler writing the same bytes whole.
func BenchmarkPageHTTP(b *testing.B) {
	catalog, _ := mustBundleCatalog(b)
	s, _ := MustServer(b, catalog)
	s.Logger = discardLogger()
	h := s.Handler()
	b.Run("Chain", func(b *testing.B) { benchmarkHTTP(b, h, "/recall") })
	b.Run("Bare", func(b *testing.B) {
		r := httptest.NewRequest(http.MethodGet, "/recall", nil)
		r.Header.Set("X-Gateway-Key", testKey)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		benchmarkHTTP(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(body)
		}), "/recall")
	})
}
