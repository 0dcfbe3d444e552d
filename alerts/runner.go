package alerts

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/rappel-ca/rappel"
)

// Store keeps subscriptions and the outbox: a node's own store, or the
// database a fleet of nodes shares.
type Store interface {
	rappel.SubscriptionStore
	rappel.ConfirmOutbox
	rappel.Outbox
	rappel.WebhookStore
	rappel.WebhookOutbox
	rappel.WatchlistStore
}

// RecordSource is a node's own store as the alerts read it: each
// refresh's new recalls, and the records they name.
type RecordSource interface {
	rappel.NewRecallsSource
	rappel.RecordEventsSource
	Record(ctx context.Context, id string) (*rappel.Record, error)
}

// DefaultFlushTimeout bounds the last pass at Close when
// Config.FlushTimeout is zero.
const DefaultFlushTimeout = 10 * time.Second

// Config is a node's alert settings, as rappel serve's flags give them.
type Config struct {
	// Confirm asks for double opt-in (Service.RequireConfirm); false when
	// the integrator collects consent.
	Confirm bool
	// SMTPAddr is the SMTP server's host:port; SMTPUser and SMTPPassword,
	// when set, authenticate.
	SMTPAddr, SMTPUser, SMTPPassword string
	// MailDir, instead of an SMTP server, receives every e-mail as a file
	// (Sender.MailDir), for development. With neither, alerts and
	// confirmation e-mails stay in their outboxes.
	MailDir string
	// SMTPFrom is the sender address, required with SMTPAddr; with
	// MailDir it defaults to DevFrom. PublicURL is the base of the links in
	// e-mails.
	SMTPFrom, PublicURL string
	// Interval is the time between two passes, each matching the new
	// recalls and sending what is due. DataChanged starts one at once.
	Interval time.Duration
	// Webhooks are the webhook settings; the runner's passes match and
	// post webhooks too.
	Webhooks HookConfig
	// FlushTimeout bounds the last pass, at Close; 0 is
	// DefaultFlushTimeout.
	FlushTimeout time.Duration
	// Node names this process in outbox claims, and RecordWait is
	// Sender.RecordWait: both are for nodes sharing an outbox; empty
	// values keep the Sender's defaults.
	Node       string
	RecordWait time.Duration
	// Lease and SMTPTimeout, when set, replace the sender's claim lease
	// (2 minutes) and SMTP timeout (30 s); the lease must exceed the
	// timeout. Tests shorten both to see a dead node's claim recovered.
	Lease, SMTPTimeout time.Duration
	// LogEvery, when set, replaces the sender's least time between two log
	// lines of one failure (Sender.LogEvery, a minute); tests shorten it.
	LogEvery time.Duration
	// PendingTTL, ConfirmPerAddress, ConfirmWindow and
	// SubscriptionsPerKeyDay are the Service's limits (0 turns each off;
	// rappel serve's flags give the defaults).
	PendingTTL             time.Duration
	ConfirmPerAddress      int
	ConfirmWindow          time.Duration
	SubscriptionsPerKeyDay int
	// PruneInterval is the time between two prunes of expired pending
	// subscriptions and ended allowances (Service.Prune), and of the
	// outboxes (OutboxRetention), run by the passes; 0 is
	// DefaultPruneInterval.
	PruneInterval time.Duration
	// OutboxRetention is how long sent and failed alerts, confirmation
	// e-mails and webhook deliveries, and the marks of matched recalls and
	// events, are kept (Outbox.PruneAlerts, ConfirmOutbox.PruneConfirmations,
	// WebhookOutbox.PruneDeliveries); 0 keeps them
	// forever. It must be at least MinOutboxRetention: a mark pruned while
	// a node can still see its recall as new lets that node send the alert
	// again.
	OutboxRetention time.Duration
}

// DefaultOutboxRetention is --alerts-outbox-retention's default.
const DefaultOutboxRetention = 30 * 24 * time.Hour

// MinOutboxRetention is the shortest OutboxRetention: well past the
// longest retry of a delivery (about 27 hours), the time an endpoint may
// fail before it is disabled (72 hours), and a fleet node's lag behind
// the others.
const MinOutboxRetention = 7 * 24 * time.Hour

// DefaultPruneInterval is Config.PruneInterval when zero: expired pending
// subscriptions wait at most this long past their expiry to be deleted.
const DefaultPruneInterval = time.Hour

// DevFrom is the sender address of e-mails written to a mail dir when
// none is given: trying alerts locally needs no address of one's own.
const DevFrom = "alerts@localhost"

// Validate reports the first setting that cannot work, naming its flag.
func (c *Config) Validate() error {
	switch {
	case c.SMTPAddr != "" && c.MailDir != "":
		return errors.New("--smtp-addr and --mail-dir are both set; give one: the SMTP server that sends e-mails, or the directory that receives them as files (development)")
	case c.SMTPAddr != "" && c.SMTPFrom == "":
		// Every e-mail would be refused for its From header.
		return errors.New("--smtp-from is empty; give the sender address of alert e-mails, such as alerts@rappel.example.ca")
	case c.Interval <= 0:
		return fmt.Errorf("--alerts-interval is %s; give a positive duration such as 30s", c.Interval)
	case c.FlushTimeout < 0:
		return fmt.Errorf("the alerts' flush timeout is %s; give a positive duration, or 0 for %s", c.FlushTimeout, DefaultFlushTimeout)
	case c.PendingTTL < 0:
		return fmt.Errorf("--alerts-pending-ttl is %s; give a positive duration such as 168h, or 0 to keep unconfirmed subscriptions forever", c.PendingTTL)
	case c.ConfirmPerAddress < 0:
		return fmt.Errorf("--alerts-confirm-per-address is %d; give a count such as 1, or 0 for no limit", c.ConfirmPerAddress)
	case c.ConfirmPerAddress > 0 && c.ConfirmWindow <= 0:
		return fmt.Errorf("--alerts-confirm-window is %s; give a positive duration such as 24h for --alerts-confirm-per-address to count in", c.ConfirmWindow)
	case c.SubscriptionsPerKeyDay < 0:
		return fmt.Errorf("--alerts-subscriptions-per-key-day is %d; give a count such as 1000, or 0 for no cap", c.SubscriptionsPerKeyDay)
	case c.PruneInterval < 0:
		return fmt.Errorf("the alerts' prune interval is %s; give a positive duration, or 0 for %s", c.PruneInterval, DefaultPruneInterval)
	case c.OutboxRetention < 0 || (c.OutboxRetention > 0 && c.OutboxRetention < MinOutboxRetention):
		return fmt.Errorf("--alerts-outbox-retention is %s; give at least %s (sent alerts and the marks that keep a recall from being alerted twice are kept that long), or 0 to keep them forever", c.OutboxRetention, MinOutboxRetention)
	}
	return nil
}

// Runner runs a node's alerts: it serves subscriptions (Service), and in a
// loop matches each refresh's new recalls against them (Matcher) and sends
// the outbox and the confirmation e-mails (Sender), every Interval and as
// soon as DataChanged says records changed, so that a new recall is
// matched right after the refresh that brought it rather than at the next
// tick. Webhooks run in a second loop of their own (HookMatcher,
// HookSender), on the same ticks: a receiver that is slow or never answers
// holds up neither the e-mail alerts nor the other receivers.
//
// Subscriptions and the outbox live in the Store (the fleet's, in fleet
// mode); the new recalls and the records always come from the node's own
// store. In a fleet every node runs a Runner: the outbox's matched marks
// and claims make each alert go out once, from the node whose claim holds
// it.
type Runner struct {
	// Service is the rappel.Alerts the edge serves.
	Service *Service
	Matcher *Matcher
	// Sender is nil when Config names neither an SMTP server nor a mail
	// dir: alerts then wait in the outbox.
	Sender *Sender
	// Hooks is the rappel.Webhooks the edge serves; HookMatcher and
	// HookSender match and post webhook deliveries, in the same loop.
	Hooks       *HookService
	HookMatcher *HookMatcher
	// Watchlists is the rappel.Watchlists the edge serves; HookMatcher
	// matches the lists with the record events.
	Watchlists *WatchService
	HookSender *HookSender

	records      RecordSource
	store        Store
	retention    time.Duration // Config.OutboxRetention
	interval     time.Duration
	flushTimeout time.Duration
	log          *slog.Logger

	pruneEvery time.Duration
	lastPrune  time.Time // by Service.Now; zero until the first pass

	// wake and hookWake hold one pending wake-up at most, of the e-mail
	// loop and of the webhook loop.
	wake, hookWake chan struct{}

	mu     sync.Mutex
	ctx    context.Context // Open's, for the last pass
	cancel context.CancelFunc
	done   chan struct{} // closed when both loops have returned
	// passes and hookPasses count the loops' finished passes, for tests.
	passes, hookPasses int
}

var _ rappel.ChangeListener = (*Runner)(nil)

// NewRunner builds the service, matchers and sender of cfg on store and
// records, the matchers with GET /recall's engine ix; Open starts the
// loop.
func NewRunner(cfg Config, store Store, records RecordSource, ix Index, log *slog.Logger) (*Runner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	r := &Runner{records: records, interval: cfg.Interval, flushTimeout: cfg.FlushTimeout, log: log,
		wake: make(chan struct{}, 1), hookWake: make(chan struct{}, 1),
		pruneEvery: cfg.PruneInterval, store: store, retention: cfg.OutboxRetention}
	if r.flushTimeout == 0 {
		r.flushTimeout = DefaultFlushTimeout
	}
	if r.pruneEvery == 0 {
		r.pruneEvery = DefaultPruneInterval
	}
	r.Service = NewService(store)
	r.Service.RequireConfirm, r.Service.Logger, r.Service.Queued = cfg.Confirm, log, r.wakeMail
	r.Service.PendingTTL, r.Service.ConfirmPerAddress, r.Service.ConfirmWindow = cfg.PendingTTL, cfg.ConfirmPerAddress, cfg.ConfirmWindow
	r.Service.SubscriptionsPerKeyDay = cfg.SubscriptionsPerKeyDay
	r.Matcher = NewMatcher(ix)
	r.Matcher.Subscriptions, r.Matcher.Outbox, r.Matcher.Records, r.Matcher.Logger = store, store, records, log
	r.newHooks(cfg, store, records, ix)
	if cfg.SMTPAddr == "" && cfg.MailDir == "" {
		if cfg.Confirm {
			log.Warn("no SMTP server nor mail dir: confirmation e-mails wait in the outbox, and subscriptions stay pending")
		}
		return r, nil
	}
	s := NewSender()
	s.Outbox, s.Confirmations, s.Subscriptions, s.Records, s.Logger = store, store, store, records, log
	s.Addr, s.User, s.Password, s.MailDir = cfg.SMTPAddr, cfg.SMTPUser, cfg.SMTPPassword, cfg.MailDir
	s.From, s.PublicURL, s.RecordWait, s.PendingTTL = cfg.SMTPFrom, cfg.PublicURL, cfg.RecordWait, cfg.PendingTTL
	if s.From == "" {
		s.From = DevFrom // MailDir: Validate requires it with SMTP
	}
	if cfg.Node != "" {
		s.Node = cfg.Node
	}
	if cfg.Lease > 0 {
		s.Lease = cfg.Lease
	}
	if cfg.SMTPTimeout > 0 {
		s.Timeout = cfg.SMTPTimeout
	}
	if cfg.LogEvery > 0 {
		s.LogEvery = cfg.LogEvery
	}
	r.Sender = s
	return r, nil
}

// newHooks builds the webhooks' matcher, sender and service.
func (r *Runner) newHooks(cfg Config, store Store, records RecordSource, ix Index) {
	h := cfg.Webhooks
	s := NewHookSender()
	s.Outbox, s.Hooks, s.Logger = store, store, r.log
	s.Client.AllowHTTPLoopback, s.Client.RootCAs = h.AllowHTTPLoopback, h.RootCAs
	if h.Timeout > 0 {
		s.Client.Timeout = h.Timeout
	}
	if h.DisableAfter > 0 {
		s.DisableAfter = h.DisableAfter
	}
	if len(h.Schedule) > 0 {
		s.Schedule = h.Schedule
	}
	if h.Jitter < 0 {
		s.Jitter = 0
	}
	if cfg.Node != "" {
		s.Node = cfg.Node
	}
	if cfg.Lease > 0 {
		s.Lease = cfg.Lease
	}
	m := NewHookMatcher(ix)
	m.Hooks, m.Outbox, m.Records, m.Logger = store, store, records, r.log
	r.HookSender, r.HookMatcher, r.Hooks = s, m, NewHookService(store, s)
	m.Watchlists, r.Watchlists = store, NewWatchService(store)
}

// Open starts the loops: a pass of each at once (batches left by a
// previous run), then one every Interval or on DataChanged, until ctx ends
// or Close.
func (r *Runner) Open(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done != nil {
		return errors.New("alerts: the runner is open already")
	}
	loopCtx, cancel := context.WithCancel(ctx)
	r.ctx, r.cancel, r.done = ctx, cancel, make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		r.loop(loopCtx, "alerts pass", r.wake, r.pass, &r.passes)
	}()
	go func() {
		defer wg.Done()
		r.loop(loopCtx, "webhooks pass", r.hookWake, r.hookPass, &r.hookPasses)
	}()
	go func(done chan struct{}) {
		wg.Wait()
		close(done)
	}(r.done)
	return nil
}

// loop runs pass at once, then every interval or on wake, until ctx ends;
// passes counts them (under r.mu).
func (r *Runner) loop(ctx context.Context, what string, wake <-chan struct{}, pass func(context.Context) error, passes *int) {
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		if err := pass(ctx); err != nil && ctx.Err() == nil {
			r.log.Error(what, "error", err)
		}
		r.mu.Lock()
		*passes++
		r.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-wake:
		}
	}
}

// DataChanged wakes both loops for a pass at once when records changed:
// the refresh that called it may have brought new recalls. It does not
// wait for the passes, so that a refresh is not held up by an SMTP server
// or a webhook receiver.
func (r *Runner) DataChanged(_ context.Context, records bool) error {
	if records {
		wake(r.wake)
		wake(r.hookWake)
	}
	return nil
}

// wakeMail wakes the e-mail loop for a pass at once: the Service calls it
// after a subscription, so that its confirmation e-mail goes out now.
func (r *Runner) wakeMail() { wake(r.wake) }

// wake asks the loop of w for a pass without waiting for it.
func wake(w chan<- struct{}) {
	select {
	case w <- struct{}{}:
	default: // a pass is due already
	}
}

// Close stops the loops, waits for them, ends the webhook test events under
// way, then runs one last pass of each, side by side, within the flush
// timeout, so that alerts and confirmation e-mails already due are sent
// before the store closes rather than at the next start. It returns those
// passes' errors.
func (r *Runner) Close() error {
	r.mu.Lock()
	ctx, cancel, done := r.ctx, r.cancel, r.done
	r.ctx, r.cancel, r.done = nil, nil, nil
	r.mu.Unlock()
	if done == nil {
		r.Hooks.Close()
		return nil
	}
	cancel()
	<-done
	r.Hooks.Close()
	fctx, cancelFlush := context.WithTimeout(context.WithoutCancel(ctx), r.flushTimeout)
	defer cancelFlush()
	var hookErr error
	hooksDone := make(chan struct{})
	go func() {
		defer close(hooksDone)
		hookErr = r.hookPass(fctx)
	}()
	err := r.pass(fctx)
	<-hooksDone
	return errors.Join(err, hookErr)
}

// pass sends the confirmation e-mails due, matches the new recalls, then
// sends the alerts due, then prunes when the last prune is PruneInterval
// old.
func (r *Runner) pass(ctx context.Context) error {
	var err error
	if r.Sender != nil {
		// The errors of SendConfirmations and SendDue name what failed
		// (claiming, sending, recording).
		_, err = r.Sender.SendConfirmations(ctx)
	}
	if merr := r.Matcher.Drain(ctx, r.records); merr != nil {
		err = errors.Join(err, fmt.Errorf("matching new recalls: %w", merr))
	}
	if r.Sender != nil {
		if _, serr := r.Sender.SendDue(ctx); serr != nil {
			err = errors.Join(err, serr)
		}
	}
	return errors.Join(err, r.prune(ctx))
}

// hookPass matches the record events against the endpoints, then posts
// the deliveries due.
func (r *Runner) hookPass(ctx context.Context) error {
	err := r.HookMatcher.Drain(ctx, r.records)
	if err != nil {
		err = fmt.Errorf("matching record events: %w", err)
	}
	if _, herr := r.HookSender.SendDue(ctx); herr != nil {
		err = errors.Join(err, herr)
	}
	return err
}

// prune runs Service.Prune and prunes both outboxes at the first pass and
// then once every pruneEvery, by the service's clock. Only the e-mail loop
// and Close call pass, one at a time, so lastPrune needs no lock.
func (r *Runner) prune(ctx context.Context) error {
	now := r.Service.Now()
	if !r.lastPrune.IsZero() && now.Sub(r.lastPrune) < r.pruneEvery {
		return nil
	}
	subs, allowances, err := r.Service.Prune(ctx)
	if err != nil {
		return err
	}
	var rows, marks, confirms, hookRows, hookMarks int
	if r.retention > 0 {
		before := now.Add(-r.retention)
		if rows, marks, err = r.store.PruneAlerts(ctx, before); err != nil {
			return fmt.Errorf("pruning the alert outbox: %w", err)
		}
		if confirms, err = r.store.PruneConfirmations(ctx, before); err != nil {
			return fmt.Errorf("pruning the confirmation e-mails' outbox: %w", err)
		}
		if hookRows, hookMarks, err = r.store.PruneDeliveries(ctx, before); err != nil {
			return fmt.Errorf("pruning the webhook outbox: %w", err)
		}
	}
	r.lastPrune = now
	if subs > 0 || allowances > 0 || rows+marks+confirms+hookRows+hookMarks > 0 {
		r.log.Info("pruned alerts", "expired_subscriptions", subs, "ended_allowances", allowances,
			"alerts", rows, "matched_recalls", marks, "confirmation_emails", confirms, "webhook_deliveries", hookRows, "matched_events", hookMarks)
	}
	return nil
}
