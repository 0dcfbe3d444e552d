package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/logtest"
)

// bulkRecords returns n records of about 2 KB of JSON each: an export of
// a few hundred of them is many times what the socket buffers between
// the node and a client hold, so that a client that stops reading holds
// the handler in a write.
func bulkRecords(n int) []*rappel.Record {
	recs := make([]*rappel.Record, n)
	for i := range recs {
		r := fullRecord()
		id := strconv.Itoa(800000 + i)
		r.RecordID, r.RecallID = "hc-"+id, id
		r.Translations.EN.ProductDescription = strings.Repeat("An electric kettle whose lid may come loose. ", 20)
		r.Translations.FR.ProductDescription = strings.Repeat("Une bouilloire électrique dont le couvercle peut se détacher. ", 15)
		recs[i] = r
	}
	return recs
}

// socketBuffer is the send buffer of the node's connections: small, so
// that what is in flight between the handler and a client that stops
// reading is a couple of hundred kilobytes, not the megabytes Linux lets
// a loopback connection buffer. (The client's receive buffer keeps its
// default: one smaller than loopback's segment size slows every
// transfer to a crawl.)
const socketBuffer = 32 << 10

// smallBuffers is a listener whose connections have small send buffers.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(socketBuffer)
	}
	return c, err
}

// serveNode serves s as rappel serve does, through s.HTTPServer and its
// timeouts, with the server-wide write timeout set to writeTimeout, on
// a loopback listener with small buffers. It returns the base URL and the
// *http.Server.
func serveNode(t *testing.T, s *Server, writeTimeout time.Duration) (string, *http.Server) {
	t.Helper()
	hs := s.HTTPServer("127.0.0.1:0")
	hs.WriteTimeout = writeTimeout
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = hs.Serve(smallBuffers{ln}) }()
	t.Cleanup(func() { hs.Close() })
	return "http://" + ln.Addr().String(), hs
}

// identityClient is a client that asks for no compression, so that what
// it reads is what the node wrote.
func identityClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableCompression: true}}
}

// startExport sends GET target with the test key and request id id, and
// returns the response with its body unread.
func startExport(t *testing.T, ctx context.Context, c *http.Client, url, id string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Gateway-Key", testKey)
	req.Header.Set("X-Request-Id", id)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// readSlowly reads r at most chunk bytes at a time with pause after each
// read, as a client on a slow link does, until the body ends or fails.
func readSlowly(r io.Reader, chunk int, pause time.Duration) ([]byte, error) {
	var out bytes.Buffer
	buf := make([]byte, chunk)
	for {
		n, err := r.Read(buf)
		out.Write(buf[:n])
		if errors.Is(err, io.EOF) {
			return out.Bytes(), nil
		}
		if err != nil {
			return out.Bytes(), err
		}
		time.Sleep(pause)
	}
}

// waitLogLine waits for the JSON log line with msg and request_id id and
// returns it; a line that never comes fails the test after a generous
// while (a bound on the test, not a measured time).
func waitLogLine(t *testing.T, logs *logtest.Buffer, msg, id string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for l := range strings.Lines(logs.String()) {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == msg && m["request_id"] == id {
				return m
			}
		}
	}
	t.Fatalf("no %q log line for request %s in\n%s", msg, id, logs)
	return nil
}

// noErrorLines fails the test when the server logged an error.
func noErrorLines(t *testing.T, logs *logtest.Buffer) {
	t.Helper()
	if strings.Contains(logs.String(), `"level":"ERROR"`) {
		t.Fatalf("an error was logged:\n%s", logs)
	}
}

// TestExport_SlowClientGetsAll exports to a client that reads slowly but
// keeps reading, over a node whose server-wide write timeout is far
// shorter than the export takes: the client gets every record, and the
// access log says 200 with the bytes sent and no cut.
func TestExport_SlowClientGetsAll(t *testing.T) {
	recs := bulkRecords(300)
	s, logs := MustServer(t, MustCatalog(t, recs))
	s.StallTimeout = 5 * time.Second
	// The fixed write timeout of other routes: the export, read at
	// about 800 KB/s, lasts several times as long.
	base, _ := serveNode(t, s, 200*time.Millisecond)
	c := identityClient()
	for _, format := range []string{"ndjson", "csv"} {
		id := "slow-" + format
		resp := startExport(t, t.Context(), c, base+"/recall/export?format="+format, id)
		body, err := readSlowly(resp.Body, 8<<10, 10*time.Millisecond)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s: the body failed after %d bytes: %v", format, len(body), err)
		}
		lines := bytes.Count(body, []byte("\n"))
		if format == "csv" {
			lines-- // the header
		}
		if resp.StatusCode != http.StatusOK || lines != len(recs) || resp.Header.Get("Rappel-Count") != strconv.Itoa(len(recs)) {
			t.Fatalf("%s: status %d, %d records of %d", format, resp.StatusCode, lines, len(recs))
		}
		line := waitLogLine(t, logs, "request", id)
		if line["status"] != 200.0 || line["cut"] != nil || line["bytes"] != float64(len(body)) || line["level"] != "INFO" {
			t.Fatalf("%s: access log %v; want 200, %d bytes, no cut", format, line, len(body))
		}
	}
	noErrorLines(t, logs)
}

// TestExport_StalledClientIsCut exports to a client that reads a little
// and then stops reading without closing: the node cuts the export once
// no byte has gone out for StallTimeout, logs it as cut with the bytes
// sent, frees its slot, and the client, reading on, sees a broken body
// rather than one that looks whole.
func TestExport_StalledClientIsCut(t *testing.T) {
	recs := bulkRecords(400)
	s, logs := MustServer(t, MustCatalog(t, recs))
	s.StallTimeout = 300 * time.Millisecond
	s.ExportSlots = 1
	base, _ := serveNode(t, s, writeTimeout)
	c := identityClient()

	resp := startExport(t, t.Context(), c, base+"/recall/export", "stalled")
	defer resp.Body.Close()
	head := make([]byte, 4<<10)
	if _, err := io.ReadFull(resp.Body, head); err != nil {
		t.Fatal(err)
	}
	line := waitLogLine(t, logs, "request", "stalled") // the client reads nothing meanwhile
	sent, _ := line["bytes"].(float64)
	if line["status"] != 200.0 || line["cut"] != cutClientStalled || line["level"] != "INFO" || sent < float64(len(head)) {
		t.Fatalf("access log %v; want 200, cut %q, at least %d bytes", line, cutClientStalled, len(head))
	}
	rest, err := io.ReadAll(resp.Body)
	if err == nil {
		t.Fatalf("reading on after the cut: %d more bytes and a clean end; want an error", len(rest))
	}
	// The slot is free again, and the whole export is more than was sent.
	again := startExport(t, t.Context(), c, base+"/recall/export", "after-stall")
	full, err := io.Copy(io.Discard, again.Body)
	again.Body.Close()
	if err != nil || again.StatusCode != http.StatusOK {
		t.Fatalf("the next export: %d, %v", again.StatusCode, err)
	}
	if int64(sent) >= full {
		t.Fatalf("%d bytes sent of %d: not cut", int64(sent), full)
	}
	noErrorLines(t, logs)
}

// TestExport_Bound fills the node's one export slot with a client that
// does not read, and checks that the next export is a 503 as the document
// describes it, with Retry-After and a sentence; that the client closing
// the connection frees the slot and is logged as 499 at INFO with the
// bytes sent, never as an error; and that an export then streams again.
func TestExport_Bound(t *testing.T) {
	recs := bulkRecords(400)
	s, logs := MustServer(t, MustCatalog(t, recs))
	s.ExportSlots = 1
	base, _ := serveNode(t, s, writeTimeout)
	c := identityClient()

	first := startExport(t, t.Context(), c, base+"/recall/export", "holder")
	if first.StatusCode != http.StatusOK {
		t.Fatalf("the first export: %d", first.StatusCode)
	}
	d := mustOpenAPI(t)
	cse := docCase{"GET", "/recall/export?format=csv", "", map[string]string{"X-Gateway-Key": testKey}, http.StatusServiceUnavailable}
	resp, body := docRequest(t, base, cse)
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a second export while the slot is taken: %d %s", resp.StatusCode, body)
	}
	d.checkResponse(t, cse, resp, body)
	var e struct{ Detail string }
	if err := json.Unmarshal(body, &e); err != nil || !strings.HasSuffix(e.Detail, ".") || !strings.Contains(e.Detail, "retry in") ||
		resp.Header.Get("Retry-After") != strconv.FormatInt(ceilSeconds(exportRetryAfter), 10) {
		t.Fatalf("503 body %s, Retry-After %q", body, resp.Header.Get("Retry-After"))
	}

	first.Body.Close() // hangs up mid-export
	line := waitLogLine(t, logs, "request", "holder")
	if line["status"] != float64(statusClientClosed) || line["cut"] != cutClientClosed || line["level"] != "INFO" || line["bytes"].(float64) <= 0 {
		t.Fatalf("access log of the export its client closed: %v", line)
	}
	for i := 0; ; i++ {
		resp := startExport(t, t.Context(), c, base+"/recall/export", fmt.Sprint("next-", i))
		_, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK && err == nil {
			break
		}
		if i == 100 {
			t.Fatalf("the slot was never freed: %d, %v", resp.StatusCode, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	noErrorLines(t, logs)
}

// TestExport_PageOverBudget cuts an export whose later page misses its
// query budget: the log says why, as a warning, and the client sees the
// body end in an error, never a body that looks whole.
func TestExport_PageOverBudget(t *testing.T) {
	recs := bulkRecords(2*exportPage + 10)
	s, logs := MustServer(t, MustCatalog(t, recs))
	// Every search is expensive, and the pool's one slot is taken after
	// the first page: the second page waits its whole budget for it.
	s.ExpensiveCost = 1
	s.ExpensiveSlots = 1
	s.QueryBudget = 300 * time.Millisecond
	base, _ := serveNode(t, s, writeTimeout)
	resp := startExport(t, t.Context(), identityClient(), base+"/recall/export", "over-budget")
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	s.pool().slots <- struct{}{}
	defer func() { <-s.pool().slots }()
	body, err := io.ReadAll(resp.Body)
	if err == nil {
		t.Fatalf("%d bytes and a clean end; want the body to fail", len(body))
	}
	line := waitLogLine(t, logs, "request", "over-budget")
	if line["status"] != 200.0 || line["cut"] != cutPageBudget || line["level"] != "WARN" {
		t.Fatalf("access log %v", line)
	}
	if lines := bytes.Count(body, []byte("\n")); lines == 0 || lines%exportPage != 0 {
		t.Fatalf("%d whole records before the cut; want whole pages", lines)
	}
}

// TestServer_ClientClosedSearch cancels a search while it waits for a
// slot of the expensive pool: the node logs the request as 499 at INFO,
// and no error.
func TestServer_ClientClosedSearch(t *testing.T) {
	s, logs := MustServer(t, MustCatalog(t, testRecords()))
	s.ExpensiveCost = 1
	s.ExpensiveSlots = 1
	s.ExpensiveWait = time.Minute
	s.QueryBudget = time.Minute
	base := MustHTTP(t, s.Handler()).URL
	a := s.pool()
	a.slots <- struct{}{} // the one slot is taken
	defer func() { <-a.slots }()

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/recall?q=cheddar", nil)
		req.Header.Set("X-Gateway-Key", testKey)
		req.Header.Set("X-Request-Id", "hung-up")
		_, err := http.DefaultClient.Do(req)
		done <- err
	}()
	for a.queued.Load() != 1 { // the search waits in the queue
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the client's request ended with %v", err)
	}
	line := waitLogLine(t, logs, "request", "hung-up")
	if line["status"] != float64(statusClientClosed) || line["level"] != "INFO" {
		t.Fatalf("access log %v; want 499 at INFO", line)
	}
	noErrorLines(t, logs)
	if strings.Contains(logs.String(), "request failed") {
		t.Fatalf("a client that hung up was logged as a failure:\n%s", logs)
	}
}

// TestExport_ShutdownCut closes the node's connections, as the end of a
// shutdown whose requests did not finish does, while an export streams to
// a client that is not reading: the access log says the shutdown cut it,
// as a warning, and the client sees a broken body.
func TestExport_ShutdownCut(t *testing.T) {
	s, logs := MustServer(t, MustCatalog(t, bulkRecords(400)))
	base, hs := serveNode(t, s, writeTimeout)
	resp := startExport(t, t.Context(), identityClient(), base+"/recall/export", "at-shutdown")
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	s.StopStreams()
	hs.Close()
	if body, err := io.ReadAll(resp.Body); err == nil {
		t.Fatalf("%d bytes and a clean end; want the body to fail", len(body))
	}
	line := waitLogLine(t, logs, "request", "at-shutdown")
	if line["status"] != 200.0 || line["cut"] != cutShutdown || line["level"] != "WARN" {
		t.Fatalf("access log %v", line)
	}
	noErrorLines(t, logs)
}
