package edge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
)

// JSONConnErrors wraps a plain-HTTP listener so that the answers net/http
// writes by itself, before any handler runs, are in the API's JSON error
// shape with a sentence that says how to fix the request, rather than
// net/http's bare "400 Bad Request" in plain text. net/http gives these
// for a request it cannot parse: a path or query holding a % not followed
// by two hexadecimal digits (/recall/%ZZ), a header line without a colon,
// a missing or malformed Host, an unsupported Transfer-Encoding or HTTP
// version, headers over readHeaderBytes.
//
// net/http offers no hook for them: it writes them straight to the
// connection and closes it. So the connection's writes are watched, and
// one that is exactly net/http's canned answer is replaced. No answer a
// handler writes can look like one: a handler's answer goes through the
// response writer, which puts the headers after the status line in sorted
// order (Connection before Content-Type) and adds Date and the API's own.
//
// A TLS listener is not wrapped: net/http must see its *tls.Conn, and
// over HTTP/2 a malformed path is a stream error, not an answer.
func JSONConnErrors(ln net.Listener) net.Listener { return connErrorListener{ln} }

type connErrorListener struct{ net.Listener }

func (l connErrorListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &connErrorConn{Conn: c}, nil
}

// connErrorConn is a connection whose net/http canned error answer, if
// any, is rewritten on its way out.
type connErrorConn struct{ net.Conn }

// cannedHeaders is what net/http writes between the status line and the
// body of the answers it makes itself (server.go, errorHeaders).
const cannedHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

func (c *connErrorConn) Write(p []byte) (int, error) {
	status, text, ok := parseCanned(p)
	if !ok {
		return c.Conn.Write(p)
	}
	b, _ := json.Marshal(errorBody{Detail: connErrorSentence(status, text)})
	var out bytes.Buffer
	fmt.Fprintf(&out, "HTTP/1.1 %d %s\r\nCache-Control: no-store\r\nConnection: close\r\nContent-Length: %d\r\nContent-Type: %s\r\nX-Content-Type-Options: nosniff\r\n\r\n",
		status, http.StatusText(status), len(b), headerJSON[0])
	out.Write(b)
	if _, err := c.Conn.Write(out.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// parseCanned reports whether p is one of net/http's own answers, with its
// status and the reason net/http gives after the status text, if any
// ("missing required Host header").
func parseCanned(p []byte) (status int, text string, ok bool) {
	rest, found := bytes.CutPrefix(p, []byte("HTTP/1.1 "))
	if !found || len(rest) < 4 || rest[3] != ' ' {
		return 0, "", false
	}
	line, _, found := bytes.Cut(rest, []byte(cannedHeaders))
	if !found || bytes.ContainsAny(line, "\r\n") {
		return 0, "", false
	}
	status, err := strconv.Atoi(string(line[:3]))
	if err != nil || status < 400 || status > 599 {
		return 0, "", false
	}
	if _, reason, has := bytes.Cut(line[4:], []byte(": ")); has {
		text = string(reason)
	}
	return status, text, true
}

// connErrorSentence is the detail of a request net/http refused by itself:
// what is wrong, as far as its status and reason tell, and what to do.
func connErrorSentence(status int, reason string) string {
	switch status {
	case http.StatusRequestHeaderFieldsTooLarge:
		return fmt.Sprintf("The request line and headers take more than %d bytes, far over this API's limit of %d bytes: send them shorter.", readHeaderBytes, maxHeaderBytes)
	case http.StatusNotImplemented:
		return "The request's Transfer-Encoding is not supported: send its body with a Content-Length, or with Transfer-Encoding: chunked."
	case http.StatusHTTPVersionNotSupported:
		return "The request's HTTP version is not supported: send HTTP/1.1 or HTTP/2."
	}
	if reason != "" {
		return "The request could not be read: " + reason + ". Send a well-formed HTTP/1.1 request."
	}
	return "The request could not be read: its request line or a header line is malformed. " +
		"The usual cause is a % in the path or query that is not followed by two hexadecimal digits: write a literal % as %25."
}
