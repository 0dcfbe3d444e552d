package plugins_test

import (
	"context"
	"testing"
	"testing/fstest"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/rappel-ca/rappel/internal/spantest"
	"github.com/rappel-ca/rappel/plugins"
)

// TestTracing_Run runs a real plugin and a failing one under a caller's
// span, in each stop mode: each run is a child span naming the plugin, its
// version (the module's SHA-256), where it ran and how many records it gave.
func TestTracing_Run(t *testing.T) {
	tp, _ := spantest.Global()
	forEachMode(t, func(t *testing.T, h *plugins.Host) {
		ctx, root := tp.Tracer("test").Start(context.Background(), "test-root")
		probe := mustLoad(t, h, "probe", guests+"probe")
		if _, err := probe.Run(ctx, fstest.MapFS{"input.txt": {Data: []byte("hello")}}); err != nil {
			t.Fatal(err)
		}
		fatal := mustLoad(t, h, "fatal", guests+"fatal")
		if _, err := fatal.Run(ctx, fstest.MapFS{}); err == nil {
			t.Fatal("the fatal guest's run did not fail")
		}
		root.End()

		runs := map[string]tracetest.SpanStub{}
		for _, s := range spantest.Children(root, "plugins.Run") {
			runs[spantest.Attr(s, "rappel.plugin.name").AsString()] = s
		}
		if len(runs) != 2 {
			t.Fatalf("%d plugins.Run spans under the caller's span, want 2", len(runs))
		}
		for _, p := range []*plugins.Plugin{probe, fatal} {
			s := runs[p.Name]
			if v := spantest.Attr(s, "rappel.plugin.version").AsString(); v != p.SHA256 {
				t.Errorf("%s: rappel.plugin.version = %q, want the module's SHA-256 %s", p.Name, v, p.SHA256)
			}
			if v := spantest.Attr(s, "rappel.plugin.child_process").AsBool(); v == h.InProcess {
				t.Errorf("%s: rappel.plugin.child_process = %v with InProcess %v", p.Name, v, h.InProcess)
			}
		}
		probeRun := runs["probe"]
		if n := spantest.Attr(probeRun, "rappel.plugin.records").AsInt64(); n != 1 || probeRun.Status.Code == codes.Error {
			t.Errorf("probe: rappel.plugin.records = %d, status %v; want 1 and no error", n, probeRun.Status)
		}
		if st := runs["fatal"].Status; st.Code != codes.Error {
			t.Errorf("fatal: status %v, want an error", st)
		}
	})
}
