package edge

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// coding is a content-coding the server can apply to a response body.
type coding uint8

// The codings, in the server's order of preference when a client accepts
// several with the same weight: zstd compresses a search page smallest and
// fastest, brotli nearly as small, gzip is the fallback every client has
// (RATIONALE.md, API edge, "Why is response compression zstd first, at
// fast levels?").
const (
	identity coding = iota
	codingZstd
	codingBrotli
	codingGzip
	numCodings
)

// codingNames are the Content-Encoding tokens; codingTags the suffixes that
// tell the ETag of an encoded representation from the identity one (a strong
// validator names exact bytes, and the encodings are different bytes).
var (
	codingNames = [numCodings]string{"", "zstd", "br", "gzip"}
	codingTags  = [numCodings]string{"", "-zst", "-br", "-gz"}
	// codingHeaders back the Content-Encoding values, so that setting one
	// does not allocate. They are never modified.
	codingHeaders = [numCodings][]string{nil, {"zstd"}, {"br"}, {"gzip"}}
)

// minCompressSize is the smallest body worth compressing: below about a
// kilobyte the encoding's framing and CPU buy little or nothing, and every
// error body and most lookups stay plain.
const minCompressSize = 1024

// Compression levels, measured on a 100-result search page of the bundle
// (246 KB): zstd's fastest level gives 14 % of the size at about 440 MB/s
// per core, brotli level 1 15 % at 340 MB/s, gzip level 2 19 % at 315 MB/s.
// Brotli 4 saves two more points at a quarter of the speed; gzip 6 saves
// three at two thirds. See BenchmarkCompress.
const (
	gzipLevel   = 2
	brotliLevel = 1
	// zstdWindow bounds the encoder's memory; browsers decode windows up
	// to 8 MiB, and pages are at most a few hundred kilobytes.
	zstdWindow = 1 << 20
)

// encoder is what the three compressors have in common.
type encoder interface {
	io.WriteCloser
	Flush() error
	Reset(w io.Writer)
}

// encoders pools the compressors per coding: building one allocates tables
// of tens to hundreds of kilobytes, which a request should not pay.
var encoders = [numCodings]sync.Pool{
	codingZstd: {New: func() any {
		e, err := zstd.NewWriter(nil,
			zstd.WithEncoderLevel(zstd.SpeedFastest),
			zstd.WithEncoderConcurrency(1), // one request, one goroutine
			zstd.WithWindowSize(zstdWindow),
			zstd.WithLowerEncoderMem(true))
		if err != nil {
			panic("edge: zstd options: " + err.Error()) // constant options
		}
		return encoder(e)
	}},
	codingBrotli: {New: func() any { return encoder(brotli.NewWriterLevel(nil, brotliLevel)) }},
	codingGzip: {New: func() any {
		e, err := gzip.NewWriterLevel(nil, gzipLevel)
		if err != nil {
			panic("edge: gzip level: " + err.Error()) // constant level
		}
		return encoder(e)
	}},
}

// headerVary is shared by every response: compression makes any of them
// depend on Accept-Encoding. Never modified.
var headerVary = []string{"Accept-Encoding"}

// compress encodes response bodies of a kilobyte or more with the coding the
// client prefers among zstd, br and gzip (Accept-Encoding, with q-values),
// dropping Content-Length and marking the ETag with the coding. It leaves
// alone 1xx, 204, 206 and 304 responses, bodies that already have a
// Content-Encoding, and types that are not text, JSON, JavaScript or XML.
func compress(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		if v := h["Vary"]; v == nil {
			h["Vary"] = headerVary
		} else {
			// A full slice expression: v may be shared, so append copies.
			h["Vary"] = append(v[:len(v):len(v)], "Accept-Encoding")
		}
		ae, ok := r.Header["Accept-Encoding"]
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		c := negotiate(ae)
		if c == identity {
			next.ServeHTTP(w, r)
			return
		}
		cw := compressWriters.Get().(*compressWriter)
		*cw = compressWriter{ResponseWriter: w, accepted: c, head: r.Method == http.MethodHead}
		next.ServeHTTP(cw, r)
		// A panic that reaches here (http.ErrAbortHandler) skips this:
		// the encoder is dropped rather than pooled in an unknown state.
		cw.finish()
		*cw = compressWriter{}
		compressWriters.Put(cw)
	})
}

var compressWriters = sync.Pool{New: func() any { return new(compressWriter) }}

// compressWriter is the ResponseWriter compress hands down. It decides at
// WriteHeader whether to encode, from the status and the headers set by
// then.
type compressWriter struct {
	http.ResponseWriter
	// accepted is the client's preferred coding, never identity.
	accepted coding
	// head marks a HEAD request: it gets the headers its GET would get
	// (RFC 9110, 9.3.2), with no body to encode.
	head bool
	// enc is the running encoder, nil when the body goes out as is.
	enc     encoder
	coding  coding
	started bool
}

// Unwrap lets http.ResponseController and exchangeOf reach the writer
// below.
func (cw *compressWriter) Unwrap() http.ResponseWriter { return cw.ResponseWriter }

// WriteHeader starts the encoder when the response qualifies, then sends
// the headers.
func (cw *compressWriter) WriteHeader(code int) {
	if cw.started || code < 200 {
		cw.ResponseWriter.WriteHeader(code)
		return
	}
	cw.started = true
	h := cw.ResponseWriter.Header()
	if compressible(code, h) {
		cw.coding = cw.accepted
		if !cw.head {
			cw.enc = encoders[cw.coding].Get().(encoder)
			cw.enc.Reset(cw.ResponseWriter)
		}
		h["Content-Encoding"] = codingHeaders[cw.coding]
		delete(h, "Content-Length")
		if tag, ok := h["Etag"]; ok && len(tag) == 1 {
			h["Etag"] = []string{taggedETag(tag[0], cw.coding)}
		}
	}
	cw.ResponseWriter.WriteHeader(code)
}

// Write encodes b, sending the headers with a 200 first if needed.
func (cw *compressWriter) Write(b []byte) (int, error) {
	if !cw.started {
		cw.WriteHeader(http.StatusOK)
	}
	if cw.enc == nil {
		return cw.ResponseWriter.Write(b)
	}
	return cw.enc.Write(b)
}

// Flush sends what the encoder holds, then flushes the connection.
func (cw *compressWriter) Flush() {
	if cw.enc != nil {
		_ = cw.enc.Flush() // a write error shows again on the next Write
	}
	_ = http.NewResponseController(cw.ResponseWriter).Flush()
}

// finish ends the encoded stream and pools the encoder.
func (cw *compressWriter) finish() {
	if cw.enc == nil {
		return
	}
	// An error means the client went away; the encoder is reset before
	// its next use either way. Resetting it to nil here would cost a second
	// reset of its tables per request; the pooled encoder keeps the last
	// writer reachable until reused or collected instead.
	_ = cw.enc.Close()
	encoders[cw.coding].Put(cw.enc)
	cw.enc = nil
}

// wouldEncode returns the coding compress would give a 200 JSON response of
// n bytes written to w, identity outside compress. writeJSON asks it to
// name the right ETag in a 304, which has no body to encode.
func wouldEncode(w http.ResponseWriter, n int) coding {
	return wouldEncodeAs(w, n, "application/json")
}

// wouldEncodeAs is wouldEncode for a body of media type ctype.
func wouldEncodeAs(w http.ResponseWriter, n int, ctype string) coding {
	for {
		switch v := w.(type) {
		case *compressWriter:
			if n < minCompressSize || !compressibleType(ctype) {
				return identity
			}
			return v.accepted
		case interface{ Unwrap() http.ResponseWriter }:
			w = v.Unwrap()
		default:
			return identity
		}
	}
}

// compressible reports whether a response with status code and headers h
// is worth encoding.
func compressible(code int, h http.Header) bool {
	switch code {
	case http.StatusNoContent, http.StatusPartialContent, http.StatusNotModified:
		return false
	}
	if _, ok := h["Content-Encoding"]; ok {
		return false
	}
	if _, ok := h["Content-Range"]; ok {
		return false
	}
	if cl, ok := h["Content-Length"]; ok && len(cl) == 1 {
		if n, err := strconv.Atoi(cl[0]); err == nil && n < minCompressSize {
			return false
		}
	}
	ct, ok := h["Content-Type"]
	return ok && len(ct) == 1 && compressibleType(ct[0])
}

// compressibleType reports whether a media type is text-like. Images,
// fonts and archives are compressed already.
func compressibleType(ct string) bool {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = strings.ToLower(strings.TrimSpace(ct))
	return strings.HasPrefix(ct, "text/") ||
		strings.HasSuffix(ct, "json") || strings.HasSuffix(ct, "+json") ||
		strings.HasSuffix(ct, "javascript") ||
		strings.HasSuffix(ct, "xml") || ct == "image/svg+xml"
}

// negotiate returns the coding to use for the Accept-Encoding field values
// ae (RFC 9110, section 12.5.3): the supported coding with the highest
// weight above 0, ties going to the server's order, "*" standing for any
// coding not named, "x-gzip" for gzip. Malformed members are skipped, so a
// broken header never makes a response fail. It does not allocate.
func negotiate(ae []string) coding {
	var q [numCodings]int // weight in thousandths; -1 unnamed
	for i := range q {
		q[i] = -1
	}
	star := -1
	for _, v := range ae {
		for v != "" {
			var member string
			if i := strings.IndexByte(v, ','); i >= 0 {
				member, v = v[:i], v[i+1:]
			} else {
				member, v = v, ""
			}
			name, weight, ok := parseMember(member)
			if !ok {
				continue
			}
			switch {
			case name == "*":
				star = weight
			case strings.EqualFold(name, "zstd"):
				q[codingZstd] = weight
			case strings.EqualFold(name, "br"):
				q[codingBrotli] = weight
			case strings.EqualFold(name, "gzip"), strings.EqualFold(name, "x-gzip"):
				q[codingGzip] = weight
			}
		}
	}
	best, bestQ := identity, 0
	for c := codingZstd; c < numCodings; c++ {
		w := q[c]
		if w < 0 {
			w = star
		}
		if w > bestQ {
			best, bestQ = c, w
		}
	}
	return best
}

// parseMember splits one Accept-Encoding member, "name" or
// "name;q=0.5" with optional whitespace and other parameters, into the
// coding and its weight in thousandths (1000 without q). ok is false for an
// empty name or a malformed q.
func parseMember(m string) (name string, weight int, ok bool) {
	weight = 1000
	name, params, _ := strings.Cut(m, ";")
	name = strings.TrimSpace(name)
	if name == "" {
		return "", 0, false
	}
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		k, val, found := strings.Cut(strings.TrimSpace(p), "=")
		if !found || !strings.EqualFold(strings.TrimSpace(k), "q") {
			continue
		}
		if weight, ok = parseQ(strings.TrimSpace(val)); !ok {
			return "", 0, false
		}
	}
	return name, weight, true
}

// parseQ reads a qvalue, "0" to "1" with up to three decimals, in
// thousandths.
func parseQ(s string) (int, bool) {
	if s == "" || len(s) > 5 || (s[0] != '0' && s[0] != '1') {
		return 0, false
	}
	n := int(s[0]-'0') * 1000
	if len(s) == 1 {
		return n, true
	}
	if s[1] != '.' {
		return 0, false
	}
	scale := 100
	for i := 2; i < len(s); i++ {
		d := s[i]
		if d < '0' || d > '9' {
			return 0, false
		}
		n += int(d-'0') * scale
		scale /= 10
	}
	if n > 1000 {
		return 0, false
	}
	return n, true
}
