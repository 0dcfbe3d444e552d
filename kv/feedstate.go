package kv

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/rappel-ca/rappel"
)

// Keys of the new-recalls outbox: o/new/<seq, 8 bytes big-endian>, and the
// last sequence number handed out.
var (
	newRecallsPrefix = []byte("o/new/")
	newRecallsSeqKey = []byte(metaPrefix + "newrecalls")
)

// stateKey is f/state/<source>.
func stateKey(source string) []byte {
	return append([]byte(statePrefix), source...)
}

// SourceState returns what is remembered of source: the zero SourceState
// with Feed.Source set when nothing is.
func (s *Store) SourceState(ctx context.Context, source string) (rappel.SourceState, error) {
	st := rappel.SourceState{Feed: rappel.FeedState{Source: source}}
	if err := checkSource(source); err != nil {
		return st, err
	}
	if _, err := s.getValue(ctx, stateKey(source), &st); err != nil {
		return st, fmt.Errorf("reading state of %s: %w", source, err)
	}
	st.Feed.Source = source
	return st, nil
}

// SourceStates returns the state of every source the store knows, in source
// name order.
func (s *Store) SourceStates(ctx context.Context) ([]rappel.SourceState, error) {
	var out []rappel.SourceState
	err := s.scan(ctx, []byte(statePrefix), func(key, val []byte) error {
		var st rappel.SourceState
		if err := decodeValue(val, &st); err != nil {
			return fmt.Errorf("decoding state of %s: %w", key[len(statePrefix):], err)
		}
		st.Feed.Source = string(key[len(statePrefix):])
		out = append(out, st)
		return nil
	})
	return out, err
}

// queue is a durable queue of batches, each under <prefix><seq, 8 bytes
// BE>, with the last sequence number handed out at seqKey: the alerts'
// new recalls and the webhooks' record events.
type queue struct {
	prefix, seqKey []byte
	what           string
}

var (
	newRecallsQueue   = queue{prefix: newRecallsPrefix, seqKey: newRecallsSeqKey, what: "new recalls"}
	recordEventsQueue = queue{prefix: []byte("o/ev/"), seqKey: []byte(metaPrefix + "recordevents"), what: "record events"}
)

func (q queue) key(seq uint64) []byte {
	return binary.BigEndian.AppendUint64(append([]byte(nil), q.prefix...), seq)
}

// addToQueue adds v to b under q's next sequence number, which setSeq
// puts in v first. s.mu must be held, so that two batches never take the
// same number.
func (s *Store) addToQueue(b *pebble.Batch, q queue, v any, setSeq func(uint64)) error {
	var last uint64
	val, closer, err := s.db.Get(q.seqKey)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
	case err != nil:
		return fmt.Errorf("reading %s sequence: %w", q.what, err)
	default:
		if len(val) == 8 {
			last = binary.BigEndian.Uint64(val)
		}
		closer.Close()
	}
	setSeq(last + 1)
	if err := b.Set(q.seqKey, binary.BigEndian.AppendUint64(nil, last+1), nil); err != nil {
		return err
	}
	if err := setJSON(b, q.key(last+1), v); err != nil {
		return fmt.Errorf("encoding %s: %w", q.what, err)
	}
	return nil
}

// queued returns the batches of q not yet acknowledged, oldest first.
func queued[T any](ctx context.Context, s *Store, q queue) ([]T, error) {
	var out []T
	err := s.scan(ctx, q.prefix, func(key, val []byte) error {
		var v T
		if err := decodeValue(val, &v); err != nil {
			return fmt.Errorf("decoding %s %x: %w", q.what, key[len(q.prefix):], err)
		}
		out = append(out, v)
		return nil
	})
	return out, err
}

// ack deletes the batch of q numbered seq, durably.
func (s *Store) ack(ctx context.Context, q queue, seq uint64) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	if err := s.db.Delete(q.key(seq), pebble.Sync); err != nil {
		return fmt.Errorf("acknowledging %s %d: %w", q.what, seq, err)
	}
	return nil
}

// NewRecalls returns the batches of new recalls not yet acknowledged,
// oldest first.
func (s *Store) NewRecalls(ctx context.Context) ([]rappel.NewRecalls, error) {
	return queued[rappel.NewRecalls](ctx, s, newRecallsQueue)
}

// AckNewRecalls deletes the batch of new recalls numbered seq, durably.
func (s *Store) AckNewRecalls(ctx context.Context, seq uint64) error {
	return s.ack(ctx, newRecallsQueue, seq)
}

// Load fills an empty store, in one batch committed with pebble.Sync: the
// assembled records, each source's partial records, raw records (their
// index; data when they carry it) and state, and the dataset info. It
// refuses a store that holds records, so that a crash during a first start
// leaves either nothing or everything. WriteTables writes the same keys
// and values as sstables, which Ingest puts into an empty store at once.
// Like them, it starts a new generation of the change log.
func (s *Store) Load(ctx context.Context, recs []*rappel.Record, partials map[string][]*rappel.Record, raw map[string][]rappel.RawRecord, states []rappel.SourceState, info rappel.DatasetInfo) error {
	return s.load(ctx, false, recs, partials, raw, states, info, nil)
}
