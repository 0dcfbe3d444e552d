package kv

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/rappel-ca/rappel"
)

// depth is what one outbox holds pending, as the metrics count it
// (rappel.OutboxDepth), kept in memory as the store writes the outbox:
// counting it at each scrape by a scan would read every row the retention
// keeps, sent and failed ones included (0.3 s for 100,000 rows; RATIONALE.md,
// "Why do the outbox gauges count e-mails"). A read costs one pass over
// the pending e-mails instead, nothing when none wait.
//
// It is built by one scan at its first read after Open, and again after a
// write of the outbox whose outcome is unknown: a commit that failed, or
// one the guard stopped waiting for and that may still land (guard.go).
// While the storage fails, every read scans rather than trust a count
// such a write may yet change; once a probe write has succeeded, the
// writes before it have landed or failed (Pebble applies commits in
// order), and the next scan counts for good. A write holds mu across its
// commit, so a scan sees all of it or none.
type depth struct {
	mu    sync.Mutex
	valid bool
	rows  int
	// groups are the pending e-mails: the rows of one subscription and
	// batch, which the sender sends as one digest.
	groups map[depthKey]*depthGroup
}

// depths are the store's outboxes' depths, made anew by Open.
type depths struct{ alerts, confirmations, webhooks depth }

type depthKey struct {
	sub string
	seq uint64
}

// depthGroup is one pending e-mail: its pending rows and the creation
// time of the oldest. Its rows are written together (one match, or one
// subscription), so the oldest is kept as the earliest ever added while
// any is pending, not looked up again when a row leaves.
type depthGroup struct {
	rows   int
	oldest time.Time
}

// rowChange is one write of an outbox row: the row before (nil for a new
// row) and after (nil for a deleted one).
type rowChange struct{ was, now *rappel.AlertRow }

// depthOf returns o's depth.
func (s *Store) depthOf(o outbox) *depth {
	switch o.rows {
	case confirmPrefix:
		return &s.depths.confirmations
	case webhookOutboxPrefix:
		return &s.depths.webhooks
	default:
		return &s.depths.alerts
	}
}

// commitOutbox commits b, a batch writing rows of o, and counts changes,
// its writes, in o's depth once they are durable.
func (s *Store) commitOutbox(o outbox, b *pebble.Batch, doing string, changes []rowChange) error {
	d := s.depthOf(o)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := s.db.commit(b, doing); err != nil {
		d.valid = false // the batch may or may not land: scan again
		return err
	}
	if d.valid {
		for _, c := range changes {
			if c.was != nil && c.was.Status == rappel.AlertPending {
				d.remove(c.was.Sub, c.was.Seq)
			}
			if c.now != nil && c.now.Status == rappel.AlertPending {
				d.add(c.now.Sub, c.now.Seq, c.now.CreatedAt)
			}
		}
	}
	return nil
}

func (d *depth) add(sub string, seq uint64, created time.Time) {
	k := depthKey{sub, seq}
	g := d.groups[k]
	if g == nil {
		g = &depthGroup{oldest: created}
		d.groups[k] = g
	} else if created.Before(g.oldest) {
		g.oldest = created
	}
	g.rows++
	d.rows++
}

func (d *depth) remove(sub string, seq uint64) {
	k := depthKey{sub, seq}
	g := d.groups[k]
	if g == nil {
		// A pending row the count never saw: it is wrong somehow, and
		// the next read counts again.
		d.valid = false
		return
	}
	d.rows--
	if g.rows--; g.rows == 0 {
		delete(d.groups, k)
	}
}

// read is the depth as counted.
func (d *depth) read() rappel.OutboxDepth {
	out := rappel.OutboxDepth{Mails: len(d.groups), Rows: d.rows}
	for _, g := range d.groups {
		if out.Oldest.IsZero() || g.oldest.Before(out.Oldest) {
			out.Oldest = g.oldest
		}
	}
	return out
}

// outboxDepth returns o's depth, scanning o first when the count kept is
// not to be trusted (see depth).
func (s *Store) outboxDepth(ctx context.Context, o outbox) (rappel.OutboxDepth, error) {
	if err := s.ready(ctx); err != nil {
		return rappel.OutboxDepth{}, err
	}
	d := s.depthOf(o)
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.valid {
		fault, _ := s.StorageFault()
		if err := s.scanDepth(ctx, o, d); err != nil {
			return rappel.OutboxDepth{}, fmt.Errorf("counting pending %ss: %w", o.what, err)
		}
		d.valid = fault == nil
	}
	return d.read(), nil
}

// scanDepth counts o's pending rows into d, decoding only what the count
// needs of each.
func (s *Store) scanDepth(ctx context.Context, o outbox, d *depth) error {
	d.rows, d.groups = 0, map[depthKey]*depthGroup{}
	var head struct {
		Sub       string    `json:"sub"`
		Seq       uint64    `json:"seq"`
		Status    string    `json:"status"`
		CreatedAt time.Time `json:"created_at"`
	}
	return s.scan(ctx, []byte(o.rows), func(_, val []byte) error {
		head.Sub, head.Seq, head.Status, head.CreatedAt = "", 0, "", time.Time{}
		if err := decodeValue(val, &head); err != nil {
			return fmt.Errorf("decoding %s: %w", o.what, err)
		}
		if head.Status == rappel.AlertPending {
			d.add(head.Sub, head.Seq, head.CreatedAt)
		}
		return nil
	})
}

// AlertDepth counts the alert e-mails waiting to be sent, for the
// outbox metrics.
func (s *Store) AlertDepth(ctx context.Context) (rappel.OutboxDepth, error) {
	return s.outboxDepth(ctx, alertOutbox)
}

// ConfirmDepth counts the confirmation e-mails waiting to be sent.
func (s *Store) ConfirmDepth(ctx context.Context) (rappel.OutboxDepth, error) {
	return s.outboxDepth(ctx, confirmOutbox)
}
