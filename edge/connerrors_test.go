package edge

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestJSONConnErrors: through the server HTTPServer makes, on a listener
// JSONConnErrors wraps as rappel serve does, the requests net/http refuses
// before any handler (a path with %ZZ, a header line without a colon, a
// missing Host, an unsupported Transfer-Encoding) get a JSON error with a
// sentence saying how to fix the request, not net/http's plain text; a
// well-formed request on the same listener is answered as usual, and a
// malformed one after a good one on a keep-alive connection too.
func TestJSONConnErrors(t *testing.T) {
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	hs := s.HTTPServer("127.0.0.1:0")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = hs.Serve(JSONConnErrors(ln)) }()
	t.Cleanup(func() { hs.Close() })
	addr := ln.Addr().String()

	for _, tc := range []struct {
		name, raw string
		status    int
		want      string
	}{
		{"BadEscape", "GET /recall/%ZZ HTTP/1.1\r\nHost: x\r\n\r\n", 400, "write a literal % as %25"},
		{"ShortEscape", "GET /recall/100%2 HTTP/1.1\r\nHost: x\r\n\r\n", 400, "two hexadecimal digits"},
		{"HeaderWithoutColon", "GET /health HTTP/1.1\r\nHost: x\r\nnot a header\r\n\r\n", 400, "malformed"},
		{"NoHost", "GET /health HTTP/1.1\r\n\r\n", 400, "missing required Host header"},
		{"TransferEncoding", "POST /alerts HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501, "Transfer-Encoding"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := rawExchange(t, addr, tc.raw)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Fatalf("Content-Type %q, want JSON", ct)
			}
			if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Fatal("no X-Content-Type-Options: nosniff")
			}
			var body errorBody
			b, _ := io.ReadAll(resp.Body)
			if err := json.Unmarshal(b, &body); err != nil {
				t.Fatalf("body %q is not the JSON error shape: %v", b, err)
			}
			if d, _ := body.Detail.(string); !strings.Contains(d, tc.want) || !strings.HasSuffix(d, ".") {
				t.Fatalf("detail %q, want a sentence with %q", d, tc.want)
			}
		})
	}

	t.Run("AfterAGoodRequest", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		br := bufio.NewReader(c)
		io.WriteString(c, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("good request: %v %v", resp, err)
		}
		io.Copy(io.Discard, resp.Body)
		io.WriteString(c, "GET /recall/%ZZ HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err = http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 400 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("malformed after a good one: %v %v", resp, err)
		}
	})
}

// rawExchange writes raw on a new connection to addr and reads the answer.
func rawExchange(t *testing.T, addr, raw string) *http.Response {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// FuzzParseCanned: whatever a write holds, parseCanned does not panic, and
// what it takes for net/http's own answer has an error status.
func FuzzParseCanned(f *testing.F) {
	f.Add([]byte("HTTP/1.1 400 Bad Request" + cannedHeaders + "400 Bad Request"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 4"))
	f.Fuzz(func(t *testing.T, p []byte) {
		if status, _, ok := parseCanned(p); ok && (status < 400 || status > 599) {
			t.Fatalf("status %d taken for an error answer", status)
		}
	})
}
