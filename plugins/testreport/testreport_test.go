package testreport

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel/plugins"
	"github.com/rappel-ca/rappel/plugins/plugintest"
)

// TestTest_RunAndCompare runs the real hcdump plugin on the Health Canada
// samples, compares it with itself, and checks the report and its text.
func TestTest_RunAndCompare(t *testing.T) {
	root := plugintest.ModuleRoot(t)
	wasm := plugintest.Build(t, "./plugins/hcdump/wasm")
	payload, err := plugins.CopyPayload(os.DirFS(filepath.Join(root, "testdata", "hc")))
	if err != nil {
		t.Fatal(err)
	}
	logs := &Log{}
	host := plugins.NewHost()
	host.CacheDir = t.TempDir()
	host.InProcess = true // stopped by wazero's deadline checks, without a child process
	host.Logger = slog.New(logs)
	ctx := context.Background()
	if err := host.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer host.Close(ctx)

	test := &Test{Host: host, Source: "hcdump", Payload: payload}
	rep := &Report{Plugin: "hcdump.wasm", Source: "hcdump", Partial: true, InputFiles: payload.Len()}
	v, err := test.Run(ctx, "hcdump.wasm", wasm, rep)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Accepted != 12 || rep.Refused != 0 || rep.SHA256 != plugins.SHA256(wasm) || len(v.Records) != 12 {
		t.Fatalf("report = %+v", rep)
	}
	base := test.Compare(ctx, "bundled", wasm, rep, v)
	if base == nil || rep.Against == nil || rep.Against.Lost != 0 || rep.Against.Accepted != 12 || rep.Against.Failed != "" {
		t.Fatalf("compared with itself: %+v", rep.Against)
	}
	rep.Judge(base.Accept(v, plugins.DefaultMaxLoss), plugins.DefaultMaxChange)
	if rep.Verdict != "accepted" {
		t.Fatalf("verdict %s: %s", rep.Verdict, rep.Reason)
	}
	var b bytes.Buffer
	rep.WriteText(&b, true, false)
	for _, want := range []string{"records   12 accepted, 0 refused by the host", "the candidate lacks 0 of them", "diff      12 records compared", "verdict   accepted"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}

	t.Run("NotAModule", func(t *testing.T) {
		rep := &Report{}
		if _, err := test.Run(ctx, "junk.wasm", []byte("not a module"), rep); err == nil || !strings.Contains(err.Error(), "not a usable module") {
			t.Fatalf("err = %v", err)
		}
		if test.Compare(ctx, "junk.wasm", []byte("not a module"), rep, v) != nil || rep.Against.Failed == "" {
			t.Errorf("a failing plugin compared with: %+v", rep.Against)
		}
		rep.Judge(nil, plugins.DefaultMaxChange)
		if rep.Verdict != "accepted" {
			t.Errorf("judged alone: %s %s", rep.Verdict, rep.Reason)
		}
	})
}
