// Package spantest keeps in memory the spans a test makes, for the tests of
// the packages whose tracers follow OpenTelemetry's global provider (cmd/rappel
// installs the SDK there; the packages import the API only), and finds the
// spans a call made and the texts they carry.
package spantest

import (
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

var install = sync.OnceValues(func() (*sdktrace.TracerProvider, *tracetest.InMemoryExporter) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	otel.SetTracerProvider(tp)
	return tp, exp
})

// Global returns the test binary's one SDK provider, installed as the global
// provider on the first call, and its exporter, which keeps each span as it
// ends. A package's tracer follows the first global provider only, so the
// provider is shared by the tests of a binary, which tell their spans apart
// by their parent (Children) or their trace.
func Global() (*sdktrace.TracerProvider, *tracetest.InMemoryExporter) {
	return install()
}

// Children returns the ended spans named name whose parent is parent, in
// the order they ended.
func Children(parent trace.Span, name string) tracetest.SpanStubs {
	_, exp := Global()
	var out tracetest.SpanStubs
	for _, s := range exp.GetSpans() {
		if s.Name == name && s.Parent.SpanID() == parent.SpanContext().SpanID() {
			out = append(out, s)
		}
	}
	return out
}

// Attr returns the value of s's attribute key, or the zero Value (of type
// INVALID) when s has none.
func Attr(s tracetest.SpanStub, key string) attribute.Value {
	for _, a := range s.Attributes {
		if string(a.Key) == key {
			return a.Value
		}
	}
	return attribute.Value{}
}

// Texts returns every text a span shows whoever reads the traces: its name,
// its status, the keys and values of its attributes and of its events', and
// its resource's values. Tests look for secrets in them.
func Texts(s tracetest.SpanStub) []string {
	texts := []string{s.Name, s.Status.Description}
	for _, a := range s.Attributes {
		texts = append(texts, string(a.Key), a.Value.Emit())
	}
	for _, e := range s.Events {
		texts = append(texts, e.Name)
		for _, a := range e.Attributes {
			texts = append(texts, string(a.Key), a.Value.Emit())
		}
	}
	if s.Resource != nil {
		for _, a := range s.Resource.Attributes() {
			texts = append(texts, a.Value.Emit())
		}
	}
	return texts
}
