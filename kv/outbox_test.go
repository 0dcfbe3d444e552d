package kv

import (
	"context"
	"log/slog"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/storetest"
)

// mustAlertStore opens a Store on an in-memory file system, closed when tb
// ends.
func mustAlertStore(tb testing.TB) *Store {
	tb.Helper()
	st := NewStore("alerts")
	st.FS = vfs.NewMem()
	st.Logger = slog.New(slog.DiscardHandler)
	if err := st.Open(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

func TestStore_SubscriptionStore(t *testing.T) {
	storetest.SubscriptionStore(t, func(t *testing.T) (rappel.SubscriptionStore, rappel.SubscriptionStore) {
		st := mustAlertStore(t)
		return st, st
	})
}

func TestStore_Outbox(t *testing.T) {
	storetest.Outbox(t, func(t *testing.T) (rappel.Outbox, rappel.Outbox) {
		st := mustAlertStore(t)
		return st, st
	})
}

func TestStore_WebhookStore(t *testing.T) {
	storetest.WebhookStore(t, func(t *testing.T) (rappel.WebhookStore, rappel.WebhookStore) {
		st := mustAlertStore(t)
		return st, st
	})
}

func TestStore_WebhookOutbox(t *testing.T) {
	storetest.WebhookOutbox(t, func(t *testing.T) (rappel.WebhookOutbox, rappel.WebhookOutbox) {
		st := mustAlertStore(t)
		return st, st
	})
}
