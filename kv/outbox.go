package kv

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/rappel-ca/rappel"
)

var _ rappel.Outbox = (*Store)(nil)

// outboxKey is a/out/<sub>\x00<record>: subscription ids are base64url and
// never hold 0x00, so rows of one subscription are contiguous.
func outboxKey(sub, record string) []byte {
	k := append([]byte(outboxPrefix), sub...)
	k = append(k, 0)
	return append(k, record...)
}

func matchedKey(seq uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte(matchedPrefix), seq)
}

// CommitMatches writes rows and the matched mark of seq in one synced
// batch, unless seq is marked already. Existing rows are kept, so that a
// row already sent is never reset to pending.
func (s *Store) CommitMatches(ctx context.Context, seq uint64, rows []*rappel.AlertRow) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if s.db == nil {
		return false, errNotOpen
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ok, err := s.has(matchedKey(seq)); err != nil || ok {
		return false, err
	}
	b := s.db.NewBatch()
	defer b.Close()
	for _, r := range rows {
		k := outboxKey(r.Sub, r.Record)
		ok, err := s.has(k)
		if err != nil {
			return false, err
		}
		if ok {
			continue
		}
		if err := putAlertJSON(b, k, r); err != nil {
			return false, fmt.Errorf("encoding alert: %w", err)
		}
	}
	if err := b.Set(matchedKey(seq), []byte(time.Now().UTC().Format(time.RFC3339)), nil); err != nil {
		return false, err
	}
	if err := commit(b, "writing alerts"); err != nil {
		return false, err
	}
	return true, nil
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

// DueAlerts returns up to limit pending rows due at now, in key order.
// It scans the whole outbox; sent rows could move to their own keyspace
// when it grows large.
func (s *Store) DueAlerts(ctx context.Context, now time.Time, limit int) ([]*rappel.AlertRow, error) {
	var out []*rappel.AlertRow
	errFull := errors.New("full")
	err := s.scanAlerts(ctx, []byte(outboxPrefix), func(_, val []byte) error {
		r := new(rappel.AlertRow)
		if err := decodeValue(val, r); err != nil {
			return fmt.Errorf("decoding alert: %w", err)
		}
		if r.Status != rappel.AlertPending || r.NextAt.After(now) {
			return nil
		}
		out = append(out, r)
		if len(out) >= limit {
			return errFull
		}
		return nil
	})
	if errors.Is(err, errFull) {
		err = nil
	}
	return out, err
}

// UpdateAlerts replaces rows in one synced batch.
func (s *Store) UpdateAlerts(ctx context.Context, rows []*rappel.AlertRow) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.db == nil {
		return errNotOpen
	}
	b := s.db.NewBatch()
	defer b.Close()
	for _, r := range rows {
		if err := putAlertJSON(b, outboxKey(r.Sub, r.Record), r); err != nil {
			return fmt.Errorf("encoding alert: %w", err)
		}
	}
	return commit(b, "updating alerts")
}
