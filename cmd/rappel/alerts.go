package main

import (
	"context"
	"flag"
	"log/slog"
	"slices"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/alerts"
	"github.com/rappel-ca/rappel/edge"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/kv/index"
	"github.com/rappel-ca/rappel/kv/postgres"
)

// AlertsConfig is the alert settings of rappel serve.
type AlertsConfig struct {
	Confirm      bool
	SMTPAddr     string
	SMTPUser     string
	SMTPPassword string
	SMTPFrom     string
	PublicURL    string
	Interval     time.Duration
	// Lease and SMTPTimeout, when set, replace the sender's claim lease
	// (2 minutes) and SMTP timeout (30 s); the lease must exceed the
	// timeout. Tests shorten both to see a dead node's claim recovered.
	Lease, SMTPTimeout time.Duration
}

func (c *AlertsConfig) register(fs *flag.FlagSet) {
	if c.Interval == 0 {
		c.Confirm, c.Interval, c.PublicURL = true, 30*time.Second, "http://127.0.0.1:8080"
	}
	fs.BoolVar(&c.Confirm, "alerts-confirm", c.Confirm, "send a confirmation e-mail (double opt-in) before alerts start; false when the integrator collects consent")
	fs.StringVar(&c.SMTPAddr, "smtp-addr", c.SMTPAddr, "SMTP server `host:port` for alert e-mails (STARTTLS when offered); empty keeps alerts in the outbox")
	fs.StringVar(&c.SMTPUser, "smtp-user", c.SMTPUser, "SMTP user (AUTH PLAIN)")
	fs.StringVar(&c.SMTPPassword, "smtp-password", c.SMTPPassword, "SMTP password")
	fs.StringVar(&c.SMTPFrom, "smtp-from", c.SMTPFrom, "sender `address` of alert e-mails")
	fs.StringVar(&c.PublicURL, "public-url", c.PublicURL, "base `URL` of the links in e-mails")
	fs.DurationVar(&c.Interval, "alerts-interval", c.Interval, "how often new recalls are matched and the outbox sent")
}

// alertsFlushTimeout bounds the last matching and sending pass at shutdown.
const alertsFlushTimeout = 10 * time.Second

// fleetRecordWait is how long, in fleet mode, a digest waits for recalls
// another node matched and this one has not fetched yet (see
// alerts.Sender.RecordWait): nodes refresh on their own schedules, each
// within one --refresh-interval (15 minutes by default) of the others.
const fleetRecordWait = time.Hour

// alertStore is what alerts keep: subscriptions and the outbox.
type alertStore interface {
	rappel.SubscriptionStore
	rappel.Outbox
}

// start wires alerts into srv and runs the matcher (and, when an SMTP server
// is set, the sender) until ctx ends or stop is called. stop ends that
// loop, waits for it, then runs one last pass within alertsFlushTimeout, so
// that alerts already due are sent before the store closes rather than at
// the next start.
//
// Subscriptions and the outbox live in shared when it is not nil (fleet
// mode), else in store; the new recalls and the records always come from
// the node's own store. In fleet mode every node matches and sends: the
// outbox's matched marks and claims make each alert go out once, from the
// node whose claim holds it, named after the shared store's Node.
func (c *AlertsConfig) start(ctx context.Context, store *kv.Store, shared *postgres.Store, srv *edge.Server, log *slog.Logger) (stop func()) {
	if c.Interval <= 0 { // register was not called: the flags' defaults
		c.register(flag.NewFlagSet("", flag.ContinueOnError))
	}
	var st alertStore = store
	if shared != nil {
		st = shared
		srv.OutboxDepth = shared.PendingAlerts // the fleet's outbox, not this node's empty one
	}
	svc := alerts.NewService(st)
	svc.RequireConfirm, svc.Logger = c.Confirm, log
	srv.Alerts = svc
	m := alerts.NewMatcher()
	m.Subscriptions, m.Outbox, m.Records, m.Logger = st, st, store, log
	m.Build = func(recs []*rappel.Record) (rappel.RecordMatcher, error) {
		return index.Build(slices.Clone(recs), rappel.DatasetInfo{})
	}
	var snd *alerts.Sender
	if c.SMTPAddr != "" {
		snd = alerts.NewSender()
		snd.Outbox, snd.Subscriptions, snd.Records, snd.Logger = st, st, store, log
		snd.Addr, snd.User, snd.Password, snd.From, snd.PublicURL = c.SMTPAddr, c.SMTPUser, c.SMTPPassword, c.SMTPFrom, c.PublicURL
		if shared != nil {
			snd.Node, snd.RecordWait = shared.Node, fleetRecordWait
		}
		if c.Lease > 0 {
			snd.Lease = c.Lease
		}
		if c.SMTPTimeout > 0 {
			snd.Timeout = c.SMTPTimeout
		}
		svc.Confirmations = snd
	}
	pass := func(ctx context.Context) {
		if err := m.Drain(ctx, store); err != nil && ctx.Err() == nil {
			log.Error("matching new recalls", "error", err)
		}
		if snd != nil {
			if _, err := snd.SendDue(ctx); err != nil && ctx.Err() == nil {
				log.Error("sending alerts", "error", err)
			}
		}
	}
	loopCtx, cancelLoop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(c.Interval)
		defer t.Stop()
		for {
			pass(loopCtx)
			select {
			case <-loopCtx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		cancelLoop()
		<-done
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), alertsFlushTimeout)
		defer cancel()
		pass(fctx)
	}
}
