package kv

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/spantest"
)

// TestTracing_Writes writes and deletes records under a caller's span: each
// batch write is a child span of it, with the batch's size.
func TestTracing_Writes(t *testing.T) {
	tp, _ := spantest.Global()
	ctx, root := tp.Tracer("test").Start(context.Background(), "test-root")
	st := MustOpenStore(t)
	recs := []*rappel.Record{makeRecord(1), makeRecord(2), makeRecord(3)}
	if err := st.PutRecords(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteRecords(ctx, []string{recs[0].RecordID}); err != nil {
		t.Fatal(err)
	}
	root.End()

	for name, minOps := range map[string]int64{"kv.PutRecords": int64(len(recs)), "kv.DeleteRecords": 1} {
		spans := spantest.Children(root, name)
		if len(spans) != 1 {
			t.Errorf("%d %s spans under the caller's span, want 1", len(spans), name)
			continue
		}
		s := spans[0]
		if s.SpanKind != trace.SpanKindInternal || s.Status.Code == codes.Error {
			t.Errorf("%s: kind %v, status %v", name, s.SpanKind, s.Status)
		}
		if n := spantest.Attr(s, "rappel.kv.batch_ops").AsInt64(); n < minOps {
			t.Errorf("%s: rappel.kv.batch_ops = %d, want at least %d", name, n, minOps)
		}
	}
}
