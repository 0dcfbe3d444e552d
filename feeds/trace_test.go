package feeds

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/spantest"
)

// TestTracing_Fetch fetches from a real upstream with a token in the URL's
// query and user info: each fetch is a client span, child of the caller's,
// naming the URL without them, also on failure.
func TestTracing_Fetch(t *testing.T) {
	tp, _ := spantest.Global()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/gone" {
			http.Error(w, "gone", http.StatusGone)
			return
		}
		io.WriteString(w, `{"recalls":[]}`)
	}))
	defer up.Close()
	const token = "feedtoken_5a9e"
	f := testFetcher()
	f.Retries = 0
	ctx, root := tp.Tracer("test").Start(context.Background(), "test-fetch")
	if _, err := f.Get(ctx, up.URL+"/recalls.json?token="+token, rappel.FileState{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Get(ctx, "http://user:"+token+"@"+strings.TrimPrefix(up.URL, "http://")+"/gone?token="+token, rappel.FileState{}); err == nil {
		t.Fatal("a 410 was not an error")
	}
	root.End()

	fetches := spantest.Children(root, "feeds.Fetch")
	if len(fetches) != 2 {
		t.Fatalf("%d feeds.Fetch spans under the caller's span, want 2", len(fetches))
	}
	if v := spantest.Attr(fetches[0], "url.full").AsString(); v != up.URL+"/recalls.json" {
		t.Errorf("url.full = %q, want the URL without its query", v)
	}
	if fetches[1].Status.Code != codes.Error || !strings.Contains(fetches[1].Status.Description, "410") {
		t.Errorf("failed fetch's status = %+v", fetches[1].Status)
	}
	for _, s := range fetches {
		if s.SpanKind != trace.SpanKindClient {
			t.Errorf("feeds.Fetch kind = %v, want client", s.SpanKind)
		}
		for _, txt := range spantest.Texts(s) {
			if strings.Contains(txt, token) {
				t.Errorf("fetch span holds the token: %q", txt)
			}
		}
	}
}
