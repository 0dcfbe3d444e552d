package main

import (
	"context"
	"flag"
	"log/slog"
	"time"

	"github.com/rappel-ca/rappel/alerts"
	"github.com/rappel-ca/rappel/edge"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/kv/index"
	"github.com/rappel-ca/rappel/kv/postgres"
)

// AlertsConfig is the alert settings of rappel serve: alerts.Config, read
// from the flags.
type AlertsConfig struct {
	alerts.Config
}

func (c *AlertsConfig) register(fs *flag.FlagSet) {
	registerWebhooks(fs, &c.Webhooks)
	if c.Interval == 0 {
		c.Confirm, c.Interval, c.PublicURL = true, 30*time.Second, "http://127.0.0.1:8080"
		c.PendingTTL, c.ConfirmPerAddress, c.ConfirmWindow = alerts.DefaultPendingTTL, alerts.DefaultConfirmPerAddress, alerts.DefaultConfirmWindow
		c.SubscriptionsPerKeyDay = alerts.DefaultSubscriptionsPerKeyDay
		c.OutboxRetention = alerts.DefaultOutboxRetention
	}
	fs.BoolVar(&c.Confirm, "alerts-confirm", c.Confirm, "send a confirmation e-mail (double opt-in) before alerts start; false when the integrator collects consent")
	fs.StringVar(&c.SMTPAddr, "smtp-addr", c.SMTPAddr, "SMTP server `host:port` for alert e-mails (STARTTLS when offered); empty keeps alerts in the outbox")
	fs.StringVar(&c.SMTPUser, "smtp-user", c.SMTPUser, "SMTP user (AUTH PLAIN)")
	fs.StringVar(&c.SMTPPassword, "smtp-password", c.SMTPPassword, "SMTP password")
	fs.StringVar(&c.SMTPFrom, "smtp-from", c.SMTPFrom, "sender `address` of alert e-mails (required with --smtp-addr; "+alerts.DevFrom+" with --mail-dir)")
	fs.StringVar(&c.MailDir, "mail-dir", c.MailDir, "for development, instead of --smtp-addr: write every e-mail into this `directory` as an .eml file and log its links")
	fs.StringVar(&c.PublicURL, "public-url", c.PublicURL, "base `URL` clients reach the API by: the links in e-mails and the Atom feed's self link are made under it")
	fs.DurationVar(&c.Interval, "alerts-interval", c.Interval, "how often new recalls are matched and the outbox sent (also right after each refresh that changed records)")
	fs.DurationVar(&c.PendingTTL, "alerts-pending-ttl", c.PendingTTL, "how long a confirmation link works; unconfirmed subscriptions are deleted after it (0 keeps them)")
	fs.IntVar(&c.ConfirmPerAddress, "alerts-confirm-per-address", c.ConfirmPerAddress, "confirmation e-mails one address may receive per --alerts-confirm-window, however often it is subscribed (0: no limit)")
	fs.DurationVar(&c.ConfirmWindow, "alerts-confirm-window", c.ConfirmWindow, "the window of --alerts-confirm-per-address")
	fs.DurationVar(&c.OutboxRetention, "alerts-outbox-retention", c.OutboxRetention, "how long sent and failed alerts and webhook deliveries, and the marks that keep a recall from being matched twice, are kept (at least 168h; 0 keeps them forever)")
	fs.IntVar(&c.SubscriptionsPerKeyDay, "alerts-subscriptions-per-key-day", c.SubscriptionsPerKeyDay, "subscriptions one API key may create a UTC day; over it, 429 (0: no cap)")
}

// fleetRecordWait is how long, in fleet mode, a digest waits for recalls
// another node matched and this one has not fetched yet (see
// alerts.Sender.RecordWait): nodes refresh on their own schedules, each
// within one --refresh-interval (15 minutes by default) of the others.
const fleetRecordWait = time.Hour

// start wires alerts into srv and opens their runner, which matches and
// sends until ctx ends or its Close, and is told of each refresh as a
// rappel.ChangeListener. Subscriptions and the outbox live in shared when
// it is not nil (fleet mode, the outbox's claims named after its Node),
// else in store; the new recalls and the records always come from store.
func (c *AlertsConfig) start(ctx context.Context, store *kv.Store, shared *postgres.Store, srv *edge.Server, log *slog.Logger) (*alerts.Runner, error) {
	if c.Interval <= 0 { // register was not called: the flags' defaults
		c.register(flag.NewFlagSet("", flag.ContinueOnError))
	}
	cfg := c.Config
	var st alerts.Store = store
	srv.WebhookDepth = store.PendingDeliveries
	if shared != nil {
		st = shared
		// The fleet's outboxes, not this node's empty ones.
		srv.OutboxDepth, srv.ConfirmDepth = shared.AlertDepth, shared.ConfirmDepth
		srv.WebhookDepth = shared.PendingDeliveries
		cfg.Node, cfg.RecordWait = shared.Node, fleetRecordWait
	}
	r, err := alerts.NewRunner(cfg, st, store, index.Engine{}, log)
	if err != nil {
		return nil, err
	}
	srv.Alerts = r.Service
	srv.Webhooks, srv.WebhookStats = r.Hooks, r.HookSender.Counts
	srv.Watchlists = r.Watchlists
	return r, r.Open(ctx)
}
