package page_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins"
	"github.com/rappel-ca/rappel/plugins/guest/guesttest"
	"github.com/rappel-ca/rappel/plugins/page"
	"github.com/rappel-ca/rappel/plugins/plugintest"
)

// TestMain serves a plugin run when the host started this test binary as
// its child.
func TestMain(m *testing.M) {
	plugintest.ServeChild()
	os.Exit(m.Run())
}

// The shipped plugin that reads the pages, the detail source's (which reads
// them through this package), loaded once into one host for the package's
// tests.
var (
	hostOnce sync.Once
	shipped  *plugins.Plugin
	hostErr  error
)

// plugin returns the detail source's plugin, built to Wasm and loaded in
// the real host.
func plugin(t *testing.T) *plugins.Plugin {
	t.Helper()
	wasm := plugintest.Build(t, "./plugins/detail/wasm")
	hostOnce.Do(func() {
		ctx := context.Background()
		h := plugins.NewHost()
		h.Timeout = 2 * time.Minute
		h.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		if hostErr = h.Open(ctx); hostErr != nil {
			return
		}
		shipped, hostErr = h.Load(ctx, page.Source, wasm)
	})
	if hostErr != nil {
		t.Fatal(hostErr)
	}
	return shipped
}

// run runs the shipped plugin over pages, file name to HTML, through the
// real host, and returns what the host accepted: a record the host refuses
// fails the test.
func run(t *testing.T, pages map[string]string) plugins.Verdict {
	t.Helper()
	fsys := fstest.MapFS{}
	for name, html := range pages {
		fsys[name] = &fstest.MapFile{Data: []byte(html)}
	}
	res, err := plugin(t).Run(context.Background(), fsys)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	v := plugins.Judge(page.Source, res, true)
	if v.Refused != 0 {
		t.Fatalf("the host refused %d records: %+v", v.Refused, v.Refusals)
	}
	return *v
}

// byID returns the records of v by record_id.
func byID(v plugins.Verdict) map[string]*rappel.Record {
	return guesttest.Output{Records: v.Records}.ByID()
}

// problemsWith returns the problems whose reason holds every one of words.
func problemsWith(v plugins.Verdict, words ...string) []string {
	var out []string
	for _, p := range v.Problems {
		ok := true
		for _, w := range words {
			ok = ok && strings.Contains(p.Reason, w)
		}
		if ok {
			out = append(out, p.Reason)
		}
	}
	return out
}

// gtin is the GTIN-14 of a printed barcode, or the test fails.
func gtin(t *testing.T, printed string) rappel.GTIN {
	t.Helper()
	g, err := rappel.ParseGTIN(printed)
	if err != nil {
		t.Fatalf("ParseGTIN(%q): %v", printed, err)
	}
	return g
}
