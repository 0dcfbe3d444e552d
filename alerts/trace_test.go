package alerts

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/alerts/smtptest"
	"github.com/rappel-ca/rappel/internal/spantest"
	"github.com/rappel-ca/rappel/kv/kvtest"
)

// TestTracing_SMTPSend subscribes, then sends the confirmation to a real
// SMTP server under a caller's span: the send is a client span, child of
// the caller's. A refusal quoting the address is an error status with the
// reply, and the address is neither in the span nor in the logs.
func TestTracing_SMTPSend(t *testing.T) {
	tp, _ := spantest.Global()
	smtp := smtptest.MustStart(t)
	p := newPipeline(t, kvtest.OpenMem(t), smtp)
	var logs bytes.Buffer // SendConfirmations sends and logs before it returns
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	p.svc.RequireConfirm, p.svc.Logger, p.snd.Logger = true, logger, logger

	subscribe := func(email string) tracetest.SpanStub {
		t.Helper()
		if _, err := p.svc.Subscribe(context.Background(), &rappel.SubscribeRequest{Email: ptr(email)}); err != nil {
			t.Fatal(err)
		}
		ctx, root := tp.Tracer("test").Start(context.Background(), "test-send")
		if _, err := p.snd.SendConfirmations(ctx); err != nil {
			t.Fatal(err)
		}
		root.End()
		sends := spantest.Children(root, "alerts.SMTPSend")
		if len(sends) != 1 || sends[0].SpanKind != trace.SpanKindClient {
			t.Fatalf("%d alerts.SMTPSend spans under the caller's span, want one client span", len(sends))
		}
		return sends[0]
	}

	ok := subscribe("first.subscriber@example.org")
	if n := len(smtp.Messages()); n != 1 {
		t.Fatalf("%d e-mails, want the confirmation", n)
	}
	if ok.Status.Code == codes.Error {
		t.Errorf("a delivered e-mail's span has status %v", ok.Status)
	}

	const refused = "refused.subscriber@example.org"
	smtp.SetDataReply("554 5.7.1 <" + refused + ">: recipient refused")
	bad := subscribe(refused)
	if bad.Status.Code != codes.Error || !strings.Contains(bad.Status.Description, "recipient refused") {
		t.Errorf("refused send's status = %+v, want an error quoting the reply", bad.Status)
	}
	if v := spantest.Attr(bad, "rappel.smtp.temporary"); v.Type() != attribute.BOOL || v.AsBool() {
		t.Errorf("rappel.smtp.temporary = %s, want false for a 554", v.Emit())
	}
	for _, s := range []tracetest.SpanStub{ok, bad} {
		if i := slices.IndexFunc(spantest.Texts(s), func(txt string) bool { return strings.Contains(txt, "@example.org") }); i >= 0 {
			t.Errorf("span %q holds an address: %q", s.Name, spantest.Texts(s)[i])
		}
	}
	if l := logs.String(); strings.Contains(l, "@example.org") || !strings.Contains(l, "recipient refused") {
		t.Errorf("logs hold an address, or not the refusal:\n%s", l)
	}
}
