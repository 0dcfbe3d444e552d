package edge

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"testing"
)

// TestServer_ShutdownCutsUnfinished closes the node's connections, as the
// end of a shutdown whose requests did not finish does, while a request
// whose body its handler never reads (POST /admin/refresh) is still
// running; its handler then answers 200 into a connection that is gone.
// net/http cancels no context for a request with an unread body, so only
// the shutdown knows the answer never left: the access log says the
// shutdown cut it, as a warning, not a plain 200.
func TestServer_ShutdownCutsUnfinished(t *testing.T) {
	s, logs := MustServer(t, MustCatalog(t, testRecords()))
	s.AdminKey = testAdminKey
	s.Feeds = feedStates
	started, release := make(chan struct{}), make(chan struct{})
	s.Refresh = func(context.Context) error {
		close(started)
		<-release // a refresh that outlasts the shutdown timeout
		return nil
	}
	base, hs := serveNode(t, s, writeTimeout)
	conn, err := net.Dial("tcp", base[len("http://"):])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /admin/refresh HTTP/1.1\r\nHost: x\r\nX-Admin-Key: %s\r\nX-Request-Id: in-flight\r\nContent-Length: 2\r\n\r\n{}", testAdminKey)
	<-started
	s.StopStreams()
	hs.Close()
	close(release)
	if resp, err := http.ReadResponse(bufio.NewReader(conn), nil); err == nil {
		t.Fatalf("the client got %s from a closed connection", resp.Status)
	}
	line := waitLogLine(t, logs, "request", "in-flight")
	if line["cut"] != cutShutdown || line["level"] != "WARN" {
		t.Fatalf("access log %v; want the request cut by the shutdown, as a warning", line)
	}
}
