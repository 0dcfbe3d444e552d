package alerts

import (
	"github.com/rappel-ca/rappel"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracer starts one span per SMTP send. It comes from the global provider:
// without an SDK installed every span is a no-op.
var tracer = otel.Tracer("github.com/rappel-ca/rappel/alerts")

// redactAddresses replaces every e-mail address in s by "<address>". SMTP
// servers quote the recipient in their replies ("550 <a@b.example>:
// mailbox unavailable"), and neither spans nor logs may carry a
// subscriber's address.
func redactAddresses(s string) string {
	return rappel.RedactAddresses(s, "<address>")
}

// endSend records an SMTP send's outcome on its span and ends it.
func endSend(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		span.SetAttributes(attribute.Bool("rappel.smtp.temporary", isTemporary(err)))
		span.SetStatus(codes.Error, redactAddresses(err.Error()))
	}
	span.End()
}
