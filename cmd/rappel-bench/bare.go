package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
)

// Bodies maps a request URI (path and query, as sent) to the body rappel
// answered for it: what the bare server serves.
type Bodies map[string][]byte

// bareHandler is the physical limit: net/http, a map lookup and a write of
// the identical bytes, nothing else.
func bareHandler(bodies Bodies) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := bodies[r.URL.RequestURI()]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h["Content-Type"] = []string{"application/json"}
		h["Content-Length"] = []string{strconv.Itoa(len(b))}
		w.Write(b)
	})
}

// runBare is `rappel-bench bare -bodies FILE -addr HOST:PORT`.
func runBare(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("rappel-bench bare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("bodies", "", "JSON `file` mapping request URIs to bodies (written by run)")
	addr := fs.String("addr", "127.0.0.1:0", "`host:port` to listen on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	b, err := os.ReadFile(*file)
	if err != nil {
		return fmt.Errorf("reading bodies: %w", err)
	}
	var bodies Bodies
	if err := json.Unmarshal(b, &bodies); err != nil {
		return fmt.Errorf("decoding bodies: %w", err)
	}
	bodies["/ready"] = []byte(`{"status":"ready"}`) // no router: one map lookup per request
	return serveHTTP(ctx, *addr, bareHandler(bodies), slog.New(slog.NewTextHandler(stderr, nil)))
}
