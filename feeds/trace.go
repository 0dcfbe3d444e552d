package feeds

import (
	"errors"
	"net/url"
	"regexp"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracer starts the spans of refreshes and fetches. It comes from the
// global provider: without an SDK installed every span is a no-op.
var tracer = otel.Tracer("github.com/rappel-ca/rappel/feeds")

// spanURL is u without its query string, fragment and user info: an
// upstream URL may carry a token in either, and spans must not.
func spanURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable URL)"
	}
	p.User, p.RawQuery, p.ForceQuery, p.Fragment, p.RawFragment = nil, "", false, "", ""
	return p.String()
}

// endSpan records err on span, when there is one, and ends it. The
// message's URLs lose their query strings and user info first: errors here
// quote the URL they fetched.
func endSpan(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		msg := redactURLs(err.Error())
		span.RecordError(errors.New(msg))
		span.SetStatus(codes.Error, msg)
	}
	span.End()
}

// urlPattern finds URLs in text, for redactURLs.
var urlPattern = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>]+`)

// redactURLs replaces every URL in s by its spanURL form.
func redactURLs(s string) string {
	return urlPattern.ReplaceAllStringFunc(s, spanURL)
}
