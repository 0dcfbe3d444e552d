package kv

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"go.opentelemetry.io/otel/trace"

	"github.com/rappel-ca/rappel"
)

var _ rappel.Outbox = (*Store)(nil)

// outbox names the keyspaces of one outbox: the alerts', the
// confirmation e-mails' and the webhooks' share the code below and differ
// in their prefixes. matched is "" for the confirmations, which nothing
// matches.
type outbox struct {
	rows, matched string
	// what names the rows in errors: "alert", "webhook delivery".
	what string
}

var (
	alertOutbox   = outbox{rows: outboxPrefix, matched: matchedRecordPrefix, what: "alert"}
	confirmOutbox = outbox{rows: confirmPrefix, what: "confirmation e-mail"}
)

var _ rappel.ConfirmOutbox = (*Store)(nil)

// key is <rows><sub>\x00<record>: subscription and endpoint ids are
// base64url and never hold 0x00, so rows of one subscription are
// contiguous.
func (o outbox) key(sub, record string) []byte {
	k := append([]byte(o.rows), sub...)
	k = append(k, 0)
	return append(k, record...)
}

func (o outbox) matchedKey(record string) []byte {
	return append([]byte(o.matched), record...)
}

// claimEpoch names this process in the claims it records. Pebble lets one
// process at a time open a store, so a claim recorded under another epoch
// was left by a process that is gone: a restarted node sends those rows at
// once instead of waiting for the lease, which only matters when several
// nodes share an outbox (package postgres).
var claimEpoch = func() uint64 {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return uint64(time.Now().UnixNano())
	}
	return binary.BigEndian.Uint64(b[:]) | 1
}()

// storedAlert is an outbox row as stored: the row and the epoch of its
// claim.
type storedAlert struct {
	rappel.AlertRow
	Epoch uint64 `json:"claim_epoch,omitempty"`
}

// claimHead is the part of a stored row the claim needs to tell whether
// the row is due, with storedAlert's JSON names.
type claimHead struct {
	Status       string    `json:"status"`
	NextAt       time.Time `json:"next_at,omitzero"`
	ClaimedBy    string    `json:"claimed_by,omitempty"`
	ClaimedUntil time.Time `json:"claimed_until,omitzero"`
	Epoch        uint64    `json:"claim_epoch,omitempty"`
}

// due reports whether the row is pending, its next attempt is at or
// before now, and no live claim holds it.
func (h *claimHead) due(now time.Time) bool {
	live := h.ClaimedBy != "" && h.Epoch == claimEpoch && h.ClaimedUntil.After(now)
	return h.Status == rappel.AlertPending && !h.NextAt.After(now) && !live
}

// UnmatchedRecords returns the ids without a matched mark, in order.
func (s *Store) UnmatchedRecords(ctx context.Context, ids []string) ([]string, error) {
	return s.unmatched(ctx, alertOutbox, ids)
}

func (s *Store) unmatched(ctx context.Context, o outbox, ids []string) ([]string, error) {
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	var out []string
	for _, id := range ids {
		ok, err := s.has(o.matchedKey(id))
		if err != nil {
			return nil, err
		}
		if !ok {
			out = append(out, id)
		}
	}
	return out, nil
}

// CommitMatches writes the matched marks of records and their rows in one
// synced batch. Records marked already keep their rows, and existing rows
// are kept, so that a row already sent is never reset to pending.
func (s *Store) CommitMatches(ctx context.Context, records []string, rows []*rappel.AlertRow) (int, error) {
	return s.commitMatches(ctx, alertOutbox, "CommitMatches", records, rows)
}

func (s *Store) commitMatches(ctx context.Context, o outbox, op string, records []string, rows []*rappel.AlertRow) (int, error) {
	return lockedWrite(ctx, s, op, func(ctx context.Context, span trace.Span, b *pebble.Batch) (int, error) {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		marked := map[string]bool{}
		at := []byte(time.Now().UTC().Format(time.RFC3339))
		for _, id := range records {
			k := o.matchedKey(id)
			ok, err := s.has(k)
			if err != nil {
				return 0, err
			}
			if ok || marked[id] {
				continue
			}
			marked[id] = true
			if err := b.Set(k, at, nil); err != nil {
				return 0, err
			}
		}
		var written []rowChange
		for _, r := range rows {
			if !marked[r.Record] {
				continue
			}
			k := o.key(r.Sub, r.Record)
			ok, err := s.has(k)
			if err != nil {
				return 0, err
			}
			if ok {
				continue
			}
			if err := setValue(b, k, storedAlert{AlertRow: *r}); err != nil {
				return 0, fmt.Errorf("encoding %s: %w", o.what, err)
			}
			written = append(written, rowChange{now: r})
		}
		if err := endWrite(span, b, s.commitOutbox(o, b, "writing "+o.what+"s", written)); err != nil {
			return 0, err
		}
		return len(written), nil
	})
}

func (s *Store) has(key []byte) (bool, error) {
	_, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading %q: %w", key, err)
	}
	closer.Close()
	return true, nil
}

// ClaimAlerts claims due rows for node in one synced batch. It scans the
// whole outbox, final rows included (decoding only their state): the
// runner's prune keeps those to the retention; a keyspace of pending rows
// would spare the scan. Claims are serialized by s.mu.
func (s *Store) ClaimAlerts(ctx context.Context, node string, now time.Time, lease time.Duration, limit int) ([]*rappel.AlertRow, error) {
	return s.claim(ctx, alertOutbox, "ClaimAlerts", node, now, lease, limit)
}

func (s *Store) claim(ctx context.Context, o outbox, op, node string, now time.Time, lease time.Duration, limit int) ([]*rappel.AlertRow, error) {
	if limit <= 0 {
		return nil, ctx.Err()
	}
	return lockedWrite(ctx, s, op, func(ctx context.Context, span trace.Span, b *pebble.Batch) ([]*rappel.AlertRow, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var due []*storedAlert
		errFull := errors.New("full")
		// A row's state is decoded first, alone: the rows not due (sent,
		// failed, waiting, claimed) are skipped without copying their payload
		// and error out of the value.
		var head claimHead
		err := s.scan(ctx, []byte(o.rows), func(_, val []byte) error {
			head = claimHead{}
			if err := decodeValue(val, &head); err != nil {
				return fmt.Errorf("decoding %s: %w", o.what, err)
			}
			if !head.due(now) {
				return nil
			}
			r := new(storedAlert)
			if err := decodeValue(val, r); err != nil {
				return fmt.Errorf("decoding %s: %w", o.what, err)
			}
			// Rows of one subscription are contiguous: once past limit, finish
			// the subscription, so that its batches are whole.
			if len(due) > limit && due[len(due)-1].Sub != r.Sub {
				return errFull
			}
			due = append(due, r)
			return nil
		})
		if err != nil && !errors.Is(err, errFull) {
			return nil, err
		}
		slices.SortFunc(due, func(x, y *storedAlert) int {
			return cmp.Or(strings.Compare(x.Sub, y.Sub), cmp.Compare(x.Seq, y.Seq), strings.Compare(x.Record, y.Record))
		})
		due = rappel.TrimClaim(due, limit, (*storedAlert).group)
		until := now.Add(lease).Truncate(time.Microsecond)
		out := make([]*rappel.AlertRow, len(due))
		for i, r := range due {
			r.ClaimedBy, r.ClaimedUntil, r.Epoch = node, until, claimEpoch
			if err := setValue(b, o.key(r.Sub, r.Record), r); err != nil {
				return nil, fmt.Errorf("encoding %s: %w", o.what, err)
			}
			row := r.AlertRow
			out[i] = &row
		}
		if err := endWrite(span, b, s.db.commit(b, "claiming "+o.what+"s")); err != nil {
			return nil, err
		}
		return out, nil
	})
}

// group is a row's subscription and batch, the e-mail it belongs to
// (rappel.TrimClaim).
func (r *storedAlert) group() (string, uint64) { return r.Sub, r.Seq }

// UpdateAlerts writes the rows still held by the claim they carry, with
// their claims released, in one synced batch.
func (s *Store) UpdateAlerts(ctx context.Context, node string, rows []*rappel.AlertRow) (int, error) {
	return s.update(ctx, alertOutbox, "UpdateAlerts", node, rows)
}

func (s *Store) update(ctx context.Context, o outbox, op, node string, rows []*rappel.AlertRow) (int, error) {
	return lockedWrite(ctx, s, op, func(ctx context.Context, span trace.Span, b *pebble.Batch) (int, error) {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		var written []rowChange
		for _, r := range rows {
			k := o.key(r.Sub, r.Record)
			cur := new(storedAlert)
			found, err := s.getValue(ctx, k, cur)
			if err != nil {
				return 0, fmt.Errorf("reading %s: %w", o.what, err)
			}
			if !found || node == "" || cur.ClaimedBy != node || cur.Epoch != claimEpoch || !cur.ClaimedUntil.Equal(r.ClaimedUntil) {
				continue
			}
			next := storedAlert{AlertRow: *r}
			next.ClaimedBy, next.ClaimedUntil = "", time.Time{}
			if err := setValue(b, k, next); err != nil {
				return 0, fmt.Errorf("encoding %s: %w", o.what, err)
			}
			written = append(written, rowChange{was: &cur.AlertRow, now: &next.AlertRow})
		}
		if err := endWrite(span, b, s.commitOutbox(o, b, "updating "+o.what+"s", written)); err != nil {
			return 0, err
		}
		return len(written), nil
	})
}

// PruneAlerts deletes the final rows created before before and the
// matched marks written before it, in one synced batch under s.mu.
func (s *Store) PruneAlerts(ctx context.Context, before time.Time) (int, int, error) {
	return s.prune(ctx, alertOutbox, "PruneAlerts", before)
}

func (s *Store) prune(ctx context.Context, o outbox, op string, before time.Time) (int, int, error) {
	rows, marks := 0, 0
	err := s.writeLocked(ctx, op, func(ctx context.Context, span trace.Span, b *pebble.Batch) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		// Only the status and creation time are decoded, not the payload.
		var row struct {
			Status    string    `json:"status"`
			CreatedAt time.Time `json:"created_at"`
		}
		err := s.scan(ctx, []byte(o.rows), func(key, val []byte) error {
			row.Status, row.CreatedAt = "", time.Time{}
			if err := decodeValue(val, &row); err != nil {
				return fmt.Errorf("decoding %s: %w", o.what, err)
			}
			if row.Status == rappel.AlertPending || row.Status == "" || !row.CreatedAt.Before(before) {
				return nil
			}
			rows++
			return b.Delete(key, nil)
		})
		if err != nil {
			return err
		}
		if o.matched != "" {
			err = s.scan(ctx, []byte(o.matched), func(key, val []byte) error {
				at, err := time.Parse(time.RFC3339, string(val))
				if err != nil || !at.Before(before) {
					return nil // an unreadable mark is kept: keeping it is safe
				}
				marks++
				return b.Delete(key, nil)
			})
			if err != nil {
				return err
			}
		}
		if rows+marks == 0 {
			return nil
		}
		return endWrite(span, b, s.db.commit(b, "pruning "+o.what+"s"))
	})
	if err != nil {
		return 0, 0, err
	}
	return rows, marks, nil
}

// ClaimConfirmations claims due confirmation rows for node, as
// ClaimAlerts claims alert rows.
func (s *Store) ClaimConfirmations(ctx context.Context, node string, now time.Time, lease time.Duration, limit int) ([]*rappel.AlertRow, error) {
	return s.claim(ctx, confirmOutbox, "ClaimConfirmations", node, now, lease, limit)
}

// UpdateConfirmations writes the confirmation rows still held by their
// claim, as UpdateAlerts writes alert rows.
func (s *Store) UpdateConfirmations(ctx context.Context, node string, rows []*rappel.AlertRow) (int, error) {
	return s.update(ctx, confirmOutbox, "UpdateConfirmations", node, rows)
}

// PruneConfirmations deletes the final confirmation rows created before
// before.
func (s *Store) PruneConfirmations(ctx context.Context, before time.Time) (int, error) {
	rows, _, err := s.prune(ctx, confirmOutbox, "PruneConfirmations", before)
	return rows, err
}
