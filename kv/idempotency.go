package kv

import (
	"context"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"go.opentelemetry.io/otel/trace"

	"github.com/rappel-ca/rappel"
)

// idempotencyPrefix holds the entries of Idempotency-Key: p/<id> is one
// rappel.IdempotentEntry.
const idempotencyPrefix = "p/"

var _ rappel.IdempotencyStore = (*Store)(nil)

func idempotencyKey(id string) []byte { return []byte(idempotencyPrefix + id) }

// ClaimIdempotent stores e unless a live entry has its id, which it
// returns; s.mu serializes it with the other writers, so that of two
// claims at once the second reads the first.
func (s *Store) ClaimIdempotent(ctx context.Context, e *rappel.IdempotentEntry, now time.Time) (*rappel.IdempotentEntry, error) {
	return lockedWrite(ctx, s, "ClaimIdempotent", func(ctx context.Context, span trace.Span, b *pebble.Batch) (*rappel.IdempotentEntry, error) {
		held, err := s.idempotentEntry(ctx, e.ID)
		if err != nil {
			return nil, err
		}
		if held != nil && held.Live(now) {
			return held, nil
		}
		if err := setValue(b, idempotencyKey(e.ID), e); err != nil {
			return nil, fmt.Errorf("encoding idempotency entry: %w", err)
		}
		return nil, endWrite(span, b, s.db.commit(b, "claiming an idempotency key"))
	})
}

// FinishIdempotent stores e, done, while e.Claim holds its entry.
func (s *Store) FinishIdempotent(ctx context.Context, e *rappel.IdempotentEntry) error {
	return s.idempotentHeld(ctx, "FinishIdempotent", e.ID, e.Claim, func(b *pebble.Batch) error {
		done := *e
		done.Done = true
		return setValue(b, idempotencyKey(e.ID), &done)
	})
}

// ReleaseIdempotent deletes the entry id while claim holds it.
func (s *Store) ReleaseIdempotent(ctx context.Context, id, claim string) error {
	return s.idempotentHeld(ctx, "ReleaseIdempotent", id, claim, func(b *pebble.Batch) error {
		return b.Delete(idempotencyKey(id), nil)
	})
}

// idempotentHeld writes what fill adds, under s.mu, when the entry id is
// held by claim; otherwise nothing.
func (s *Store) idempotentHeld(ctx context.Context, op, id, claim string, fill func(b *pebble.Batch) error) error {
	return s.writeLocked(ctx, op, func(ctx context.Context, span trace.Span, b *pebble.Batch) error {
		held, err := s.idempotentEntry(ctx, id)
		if err != nil || held == nil || held.Claim != claim {
			return err
		}
		if err := fill(b); err != nil {
			return fmt.Errorf("encoding idempotency entry: %w", err)
		}
		return endWrite(span, b, s.db.commit(b, "storing an idempotent answer"))
	})
}

// idempotentEntry reads the entry id, nil when there is none.
func (s *Store) idempotentEntry(ctx context.Context, id string) (*rappel.IdempotentEntry, error) {
	e := new(rappel.IdempotentEntry)
	found, err := s.getValue(ctx, idempotencyKey(id), e)
	if err != nil {
		return nil, fmt.Errorf("reading idempotency entry: %w", err)
	}
	if !found {
		return nil, nil
	}
	return e, nil
}

// DeleteIdempotentBefore deletes the entries created before t, in one
// batch: they are a day's keyed POSTs, scanned once an hour.
func (s *Store) DeleteIdempotentBefore(ctx context.Context, t time.Time) (int, error) {
	return lockedWrite(ctx, s, "DeleteIdempotentBefore", func(ctx context.Context, span trace.Span, b *pebble.Batch) (int, error) {
		err := scanValues(ctx, s, []byte(idempotencyPrefix), "idempotency entry", func(e *rappel.IdempotentEntry) error {
			if e.CreatedAt.Before(t) {
				return b.Delete(idempotencyKey(e.ID), nil)
			}
			return nil
		})
		n := int(b.Count())
		if err != nil || n == 0 {
			return 0, err
		}
		return n, endWrite(span, b, s.db.commit(b, "deleting expired idempotency entries"))
	})
}
