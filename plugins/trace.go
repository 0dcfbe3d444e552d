package plugins

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracer starts one span per plugin run. It comes from the global provider:
// without an SDK installed every span is a no-op.
var tracer = otel.Tracer("github.com/rappel-ca/rappel/plugins")

// endRun records a run's outcome on its span and ends it. A plugin's
// version is the SHA-256 of its module, which is what the registry and
// /health name it by.
func endRun(span trace.Span, res *Result, err error) {
	if span.IsRecording() {
		if res != nil {
			span.SetAttributes(
				attribute.Int("rappel.plugin.records", len(res.Records)),
				attribute.Int("rappel.plugin.problems", len(res.Problems)),
				attribute.Int("rappel.plugin.lines", res.Lines),
			)
		}
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, "plugin run failed")
		}
	}
	span.End()
}
