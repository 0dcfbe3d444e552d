package edge

import (
	"context"
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rappel-ca/rappel"
)

// mailOutboxCollector reports the e-mail outboxes at each scrape, from
// Server.OutboxDepth and Server.ConfirmDepth: the e-mails waiting (as the
// sender sends them, one per subscription and batch of new recalls, not
// one per outbox row) and how long the oldest has waited. An outbox whose
// field is nil has no series; one whose count fails reads NaN, a gap
// rather than a false zero. The fields are read at each scrape, as
// rappel serve may set them after the registry was built.
type mailOutboxCollector struct{ s *Server }

var (
	alertOutboxPendingDesc = prometheus.NewDesc("rappel_alert_outbox_pending",
		"Alert e-mails waiting to be sent, retries included: one per subscription and batch of new recalls, however many recalls it lists (fleet-wide with --shared-store).", nil, nil)
	alertOutboxOldestDesc = prometheus.NewDesc("rappel_alert_outbox_oldest_seconds",
		"Seconds since the oldest alert e-mail waiting was queued (its recalls matched); 0 when none waits.", nil, nil)
	confirmOutboxPendingDesc = prometheus.NewDesc("rappel_confirmation_outbox_pending",
		"Confirmation e-mails of new subscriptions waiting to be sent, retries included (fleet-wide with --shared-store).", nil, nil)
	confirmOutboxOldestDesc = prometheus.NewDesc("rappel_confirmation_outbox_oldest_seconds",
		"Seconds since the oldest confirmation e-mail waiting was queued (its subscription made); 0 when none waits.", nil, nil)
)

func (c *mailOutboxCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{alertOutboxPendingDesc, alertOutboxOldestDesc, confirmOutboxPendingDesc, confirmOutboxOldestDesc} {
		ch <- d
	}
}

func (c *mailOutboxCollector) Collect(ch chan<- prometheus.Metric) {
	c.collect(ch, c.s.OutboxDepth, "alert", alertOutboxPendingDesc, alertOutboxOldestDesc)
	c.collect(ch, c.s.ConfirmDepth, "confirmation", confirmOutboxPendingDesc, confirmOutboxOldestDesc)
}

// collect reports one outbox's e-mails and oldest age, counted by depth.
func (c *mailOutboxCollector) collect(ch chan<- prometheus.Metric, depth func(context.Context) (rappel.OutboxDepth, error), what string, pending, oldest *prometheus.Desc) {
	if depth == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d, err := depth(ctx)
	mails, age := float64(d.Mails), 0.0
	if !d.Oldest.IsZero() {
		age = max(c.s.Now().Sub(d.Oldest).Seconds(), 0)
	}
	if err != nil {
		c.s.Logger.Warn("counting the "+what+" outbox for /metrics", "err", err)
		mails, age = math.NaN(), math.NaN()
	}
	ch <- prometheus.MustNewConstMetric(pending, prometheus.GaugeValue, mails)
	ch <- prometheus.MustNewConstMetric(oldest, prometheus.GaugeValue, age)
}
