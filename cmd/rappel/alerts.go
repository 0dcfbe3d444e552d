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

// start wires alerts into srv and, when an SMTP server is set, runs the
// matcher and sender until ctx ends.
func (c *AlertsConfig) start(ctx context.Context, store *kv.Store, srv *edge.Server, log *slog.Logger) {
	if c.Interval <= 0 { // register was not called: the flags' defaults
		c.register(flag.NewFlagSet("", flag.ContinueOnError))
	}
	svc := alerts.NewService(store)
	svc.RequireConfirm, svc.Logger = c.Confirm, log
	srv.Alerts = svc
	m := alerts.NewMatcher()
	m.Subscriptions, m.Outbox, m.Records, m.Logger = store, store, store, log
	m.Build = func(recs []*rappel.Record) (rappel.RecordMatcher, error) {
		return index.Build(slices.Clone(recs), rappel.DatasetInfo{})
	}
	var snd *alerts.Sender
	if c.SMTPAddr != "" {
		snd = alerts.NewSender()
		snd.Outbox, snd.Subscriptions, snd.Records, snd.Logger = store, store, store, log
		snd.Addr, snd.User, snd.Password, snd.From, snd.PublicURL = c.SMTPAddr, c.SMTPUser, c.SMTPPassword, c.SMTPFrom, c.PublicURL
		svc.Confirmations = snd
	}
	go func() {
		t := time.NewTicker(c.Interval)
		defer t.Stop()
		for {
			if err := m.Drain(ctx, store); err != nil && ctx.Err() == nil {
				log.Error("matching new recalls", "error", err)
			}
			if snd != nil {
				if _, err := snd.SendDue(ctx); err != nil && ctx.Err() == nil {
					log.Error("sending alerts", "error", err)
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}
