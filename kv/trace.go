package kv

import (
	"context"

	"github.com/cockroachdb/pebble/v2"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracer starts a span per batch write. It comes from the global provider:
// without an SDK installed every span is a no-op.
var tracer = otel.Tracer("github.com/rappel-ca/rappel/kv")

// startWrite starts the span of one batch write, named after the Store
// method ("kv.PutRecords"); the caller ends it.
func startWrite(ctx context.Context, name string) (context.Context, trace.Span) {
	return tracer.Start(ctx, "kv."+name, trace.WithSpanKind(trace.SpanKindInternal))
}

// endWrite records on a write's span the batch's size and err, and returns
// err, so that a method can end with return endWrite(span, b, commit(…)).
// Errors name keys and record ids, never subscribers' addresses (those
// writes are not traced).
func endWrite(span trace.Span, b *pebble.Batch, err error) error {
	if span.IsRecording() {
		if b != nil {
			span.SetAttributes(attribute.Int("rappel.kv.batch_ops", int(b.Count())))
		}
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, "batch write failed")
		}
	}
	return err
}
