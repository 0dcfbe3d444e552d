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

// One host for the package's tests, and the plugins loaded in it, by
// the package their module is built from.
var (
	hostMu  sync.Mutex
	host    *plugins.Host
	loaded  = map[string]*plugins.Plugin{}
	hostErr error
)

// load returns the plugin built to Wasm from pkg, loaded in the real host.
func load(t *testing.T, pkg string) *plugins.Plugin {
	t.Helper()
	wasm := plugintest.Build(t, pkg)
	hostMu.Lock()
	defer hostMu.Unlock()
	ctx := context.Background()
	if host == nil && hostErr == nil {
		host = plugins.NewHost()
		host.Timeout = 2 * time.Minute
		host.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		hostErr = host.Open(ctx)
	}
	if hostErr != nil {
		t.Fatal(hostErr)
	}
	if p, ok := loaded[pkg]; ok {
		return p
	}
	p, err := host.Load(ctx, page.Source, wasm)
	if err != nil {
		t.Fatal(err)
	}
	loaded[pkg] = p
	return p
}

// plugin returns the shipped plugin that reads the pages: the detail
// source's, which reads them through this package.
func plugin(t *testing.T) *plugins.Plugin { return load(t, "./plugins/detail/wasm") }

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
