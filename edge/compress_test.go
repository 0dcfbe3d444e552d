package edge

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// decode decodes body from the content-coding name.
func decode(tb testing.TB, name string, body []byte) []byte {
	tb.Helper()
	var r io.Reader
	switch name {
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			tb.Fatalf("gzip: %v", err)
		}
		r = zr
	case "zstd":
		zr, err := zstd.NewReader(bytes.NewReader(body))
		if err != nil {
			tb.Fatalf("zstd: %v", err)
		}
		defer zr.Close()
		r = zr
	case "br":
		r = brotli.NewReader(bytes.NewReader(body))
	default:
		tb.Fatalf("unexpected Content-Encoding %q", name)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		tb.Fatalf("decoding %s: %v", name, err)
	}
	return b
}

func TestCompress_Encodings(t *testing.T) {
	s, _ := MustServer(t, MustCatalog(t, corpusRecords(300, 7)))
	ts := MustHTTP(t, s.Handler())
	const page = "/recall?limit=100"
	plain, plainBody := exchangeHTTP(t, http.MethodGet, ts.URL+page, true, nil)
	if plain.Header.Get("Content-Encoding") != "" || plain.ContentLength != int64(len(plainBody)) || len(plainBody) < 10*minCompressSize {
		t.Fatalf("without Accept-Encoding: Content-Encoding %q, Content-Length %d for %d bytes; want a plain page over 10 KiB with its length",
			plain.Header.Get("Content-Encoding"), plain.ContentLength, len(plainBody))
	}
	tag := plain.Header.Get("ETag")
	for _, c := range []struct{ accept, coding, suffix string }{
		{"gzip", "gzip", "-gz"},
		{"x-gzip", "gzip", "-gz"},
		{"zstd", "zstd", "-zst"},
		{"br", "br", "-br"},
		{"gzip, deflate, br, zstd", "zstd", "-zst"}, // a browser's: ties go to zstd
		{"gzip, deflate, br", "br", "-br"},
		{"gzip;q=1, br;q=0.5", "gzip", "-gz"},
		{"zstd;q=0, br;q=0.2, gzip;q=0.1", "br", "-br"},
		{"GZIP ; Q=0.9", "gzip", "-gz"},
		{"*", "zstd", "-zst"},
		{"*;q=0.5, zstd;q=0", "br", "-br"},
		{"identity;q=0.5, gzip;q=0.4", "gzip", "-gz"},
	} {
		t.Run(c.accept, func(t *testing.T) {
			resp, body := exchangeHTTP(t, http.MethodGet, ts.URL+page, true, map[string]string{"Accept-Encoding": c.accept})
			if got := resp.Header.Get("Content-Encoding"); got != c.coding {
				t.Fatalf("Content-Encoding %q, want %q", got, c.coding)
			}
			if resp.ContentLength != -1 || resp.Header.Get("Content-Length") != "" {
				t.Errorf("Content-Length %d kept on an encoded body", resp.ContentLength)
			}
			if len(body) >= len(plainBody)/3 {
				t.Errorf("%s body is %d bytes for %d plain", c.coding, len(body), len(plainBody))
			}
			if got := decode(t, c.coding, []byte(body)); string(got) != plainBody {
				t.Errorf("%s body decodes to %d bytes that differ from the plain page", c.coding, len(got))
			}
			want := strings.TrimSuffix(tag, `"`) + c.suffix + `"`
			if got := resp.Header.Get("ETag"); got != want {
				t.Errorf("ETag %q, want %q", got, want)
			}
			if v := resp.Header.Values("Vary"); !containsToken(v, "Accept-Encoding") {
				t.Errorf("Vary %q lacks Accept-Encoding", v)
			}
			// The client revalidates with the tag it holds, or with the
			// plain one: either is the same representation's content.
			for _, inm := range []string{want, tag} {
				r304, b304 := exchangeHTTP(t, http.MethodGet, ts.URL+page, true,
					map[string]string{"Accept-Encoding": c.accept, "If-None-Match": inm})
				if r304.StatusCode != http.StatusNotModified || b304 != "" || r304.Header.Get("ETag") != want {
					t.Errorf("If-None-Match %s = %d, ETag %q, %d bytes; want 304, %s, no body",
						inm, r304.StatusCode, r304.Header.Get("ETag"), len(b304), want)
				}
				if ce := r304.Header.Get("Content-Encoding"); ce != "" {
					t.Errorf("304 has Content-Encoding %q", ce)
				}
			}
		})
	}
	for _, accept := range []string{"gzip;q=0", "identity", "deflate", "zstd;q=0, br;q=0, gzip;q=0", "*;q=0", "gzip;q=2", "gzip;q=abc", ";;;"} {
		t.Run("Refused/"+accept, func(t *testing.T) {
			resp, body := exchangeHTTP(t, http.MethodGet, ts.URL+page, true, map[string]string{"Accept-Encoding": accept})
			if ce := resp.Header.Get("Content-Encoding"); ce != "" || body != plainBody || resp.Header.Get("ETag") != tag {
				t.Errorf("Content-Encoding %q, ETag %q, %d bytes; want the plain page", ce, resp.Header.Get("ETag"), len(body))
			}
		})
	}
	t.Run("HEAD", func(t *testing.T) {
		// HEAD gets the headers its GET would get (RFC 9110, 9.3.2): the
		// same coding and tagged ETag, without a body.
		get, _ := exchangeHTTP(t, http.MethodGet, ts.URL+page, true, map[string]string{"Accept-Encoding": "gzip"})
		resp, body := exchangeHTTP(t, http.MethodHead, ts.URL+page, true, map[string]string{"Accept-Encoding": "gzip"})
		if ce := resp.Header.Get("Content-Encoding"); ce != "gzip" || body != "" || resp.Header.Get("ETag") != get.Header.Get("ETag") || resp.Header.Get("Content-Length") != "" {
			t.Errorf("HEAD: Content-Encoding %q, ETag %q, Content-Length %q; want gzip, %q (as GET) and none",
				ce, resp.Header.Get("ETag"), resp.Header.Get("Content-Length"), get.Header.Get("ETag"))
		}
		resp, body = exchangeHTTP(t, http.MethodHead, ts.URL+page, true, nil)
		if ce := resp.Header.Get("Content-Encoding"); ce != "" || body != "" || resp.ContentLength != int64(len(plainBody)) || resp.Header.Get("ETag") != tag {
			t.Errorf("HEAD without Accept-Encoding: Content-Encoding %q, Content-Length %d; want none and %d", ce, resp.ContentLength, len(plainBody))
		}
	})
}

func TestCompress_SmallBodies(t *testing.T) {
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	ts := MustHTTP(t, s.Handler())
	for _, c := range []struct {
		path string
		key  bool
	}{
		{"/health", false},
		{"/recall/hc-74012", true},
		{"/recall/nope", true},
		{"/recall/hc-73841", false}, // 403
	} {
		resp, body := exchangeHTTP(t, http.MethodGet, ts.URL+c.path, c.key, map[string]string{"Accept-Encoding": "gzip, br, zstd"})
		if len(body) >= minCompressSize {
			t.Fatalf("%s is %d bytes; the test needs a small body", c.path, len(body))
		}
		if ce := resp.Header.Get("Content-Encoding"); ce != "" || resp.ContentLength != int64(len(body)) {
			t.Errorf("%s (%d bytes): Content-Encoding %q, Content-Length %d; want a plain body with its length",
				c.path, len(body), ce, resp.ContentLength)
		}
	}
}

// TestCompress_OtherHandlers covers responses written without writeJSON:
// already encoded, partial, not text, or without a length.
func TestCompress_OtherHandlers(t *testing.T) {
	big := strings.Repeat("recall ", 1000)
	serve := func(set func(h http.Header)) *httptest.ResponseRecorder {
		h := compress(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			set(w.Header())
			_, _ = io.WriteString(w, big)
		}))
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Accept-Encoding", "gzip")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	for name, c := range map[string]struct {
		set    func(h http.Header)
		coding string
	}{
		"text without length": {func(h http.Header) { h.Set("Content-Type", "text/html; charset=utf-8") }, "gzip"},
		"javascript":          {func(h http.Header) { h.Set("Content-Type", "text/javascript") }, "gzip"},
		"woff2":               {func(h http.Header) { h.Set("Content-Type", "font/woff2") }, ""},
		"no type":             {func(h http.Header) {}, ""},
		"encoded already": {func(h http.Header) {
			h.Set("Content-Type", "application/json")
			h.Set("Content-Encoding", "br")
		}, "br"},
		"range": {func(h http.Header) {
			h.Set("Content-Type", "text/plain")
			h.Set("Content-Range", "bytes 0-6999/9000")
		}, ""},
	} {
		w := serve(c.set)
		if got := w.Header().Get("Content-Encoding"); got != c.coding {
			t.Errorf("%s: Content-Encoding %q, want %q", name, got, c.coding)
		}
		if c.coding == "gzip" && string(decode(t, "gzip", w.Body.Bytes())) != big {
			t.Errorf("%s: the body does not decode to what was written", name)
		}
	}
}

func containsToken(values []string, token string) bool {
	for _, v := range values {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

func TestNegotiate(t *testing.T) {
	for _, c := range []struct {
		ae   []string
		want coding
	}{
		{nil, identity},
		{[]string{""}, identity},
		{[]string{"gzip"}, codingGzip},
		{[]string{"gzip", "br"}, codingBrotli}, // two field lines
		{[]string{"br;q=0.9, gzip;q=0.91"}, codingGzip},
		{[]string{"br;q=0.900, gzip;q=0.9"}, codingBrotli},
		{[]string{"br;q=1.0, gzip;q=1"}, codingBrotli},
		{[]string{"zstd;q=0.001"}, codingZstd},
		{[]string{"zstd;q=0.0001"}, identity},
		{[]string{"zstd;q=1.001"}, identity},
		{[]string{"zstd;level=3;q=0.5, gzip;q=0.4"}, codingZstd},
		{[]string{"*;q=0.1, gzip;q=0"}, codingZstd},
		{[]string{"gzip;q=0, *"}, codingZstd},
		{[]string{"compress, deflate"}, identity},
		{[]string{"gzip;q="}, identity},
		{[]string{"gzip;q=.5"}, identity},
		{[]string{" gzip ; q = 0.5 "}, codingGzip},
	} {
		if got := negotiate(c.ae); got != c.want {
			t.Errorf("negotiate(%q) = %q, want %q", c.ae, codingNames[got], codingNames[c.want])
		}
	}
}

// qvalue is RFC 9110's grammar of a weight.
var qvalue = regexp.MustCompile(`^(0(\.[0-9]{0,3})?|1(\.0{0,3})?)$`)

// referenceNegotiate is negotiate written the obvious way, allocating, for
// FuzzAcceptEncoding to compare with.
func referenceNegotiate(header string) coding {
	weights := map[string]int{}
	for _, member := range strings.Split(header, ",") {
		parts := strings.Split(member, ";")
		name := strings.ToLower(strings.TrimSpace(parts[0]))
		if name == "" {
			continue
		}
		w, ok := 1000, true
		for _, p := range parts[1:] {
			k, v, found := strings.Cut(strings.TrimSpace(p), "=")
			if !found || strings.ToLower(strings.TrimSpace(k)) != "q" {
				continue
			}
			v = strings.TrimSpace(v)
			if !qvalue.MatchString(v) {
				ok = false
				break
			}
			f, _ := strconv.ParseFloat(v, 64)
			w = int(f*1000 + 0.5)
		}
		if !ok {
			continue
		}
		if name == "x-gzip" {
			name = "gzip"
		}
		weights[name] = w
	}
	best, bestW := identity, 0
	for c := codingZstd; c < numCodings; c++ {
		w, ok := weights[codingNames[c]]
		if !ok {
			w, ok = weights["*"]
		}
		if ok && w > bestW {
			best, bestW = c, w
		}
	}
	return best
}

// FuzzAcceptEncoding checks negotiate against the reference on any header:
// same choice, no panic.
func FuzzAcceptEncoding(f *testing.F) {
	for _, s := range []string{
		"gzip, deflate, br, zstd", "br;q=0.5, gzip;q=0.8", "*;q=0", "identity", "x-gzip",
		"zstd;q=0.001", "gzip;q=1.000", "gzip;q=", ";q=1", "gzip;;q=0.5", "GZip;Q=0.3",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		got, want := negotiate([]string{header}), referenceNegotiate(header)
		if got != want {
			t.Errorf("negotiate(%q) = %q, reference %q", header, codingNames[got], codingNames[want])
		}
	})
}

// compressPage is a handler and a 100-result page of the generated corpus
// (about 110 KB).
func compressPage(b *testing.B) (http.Handler, string) {
	s, _ := MustServer(b, MustCatalog(b, corpusRecords(300, 7)))
	s.Logger = discardLogger()
	return s.Handler(), "/recall?limit=100"
}

// BenchmarkCompress serves a 100-result search page through the whole
// handler with each coding; identity is the baseline.
func BenchmarkCompress(b *testing.B) {
	h, page := compressPage(b)
	for c := identity; c < numCodings; c++ {
		name := codingNames[c]
		if c == identity {
			name = "identity"
		}
		b.Run(name, func(b *testing.B) {
			r := httptest.NewRequest(http.MethodGet, page, nil)
			r.Header.Set("X-Gateway-Key", testKey)
			if c != identity {
				r.Header.Set("Accept-Encoding", codingNames[c])
			}
			w := &benchWriter{h: http.Header{}}
			pr := r.Clone(r.Context())
			pr.Header.Del("Accept-Encoding")
			h.ServeHTTP(w, pr)
			plain := w.n
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				w.status, w.n = 0, 0
				h.ServeHTTP(w, r)
				if w.status != http.StatusOK {
					b.Fatalf("status %d", w.status)
				}
			}
			b.ReportMetric(float64(w.n), "B/resp")
			b.ReportMetric(100*float64(w.n)/float64(plain), "%size")
		})
	}
}

// BenchmarkGetRecord_NotModified is a revalidation of GET
// /recall/{record_id}: hashing the record and answering 304.
func BenchmarkGetRecord_NotModified(b *testing.B) {
	s, _ := MustServer(b, MustCatalog(b, testRecords()))
	s.Logger = discardLogger()
	h := s.Handler()
	body, _ := s.Catalog.Snapshot().RecordJSON("hc-73841", "")
	r := httptest.NewRequest(http.MethodGet, "/recall/hc-73841", nil)
	r.Header.Set("X-Gateway-Key", testKey)
	r.Header.Set("If-None-Match", etagOf(body))
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusNotModified {
			b.Fatalf("status %d", w.Code)
		}
	}
}
