package postgres

import (
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/postgres/pgtest"
	"github.com/rappel-ca/rappel/kv/storetest"
)

func TestStore_WebhookStore(t *testing.T) {
	storetest.WebhookStore(t, func(t *testing.T) (rappel.WebhookStore, rappel.WebhookStore) {
		dsn := pgtest.DSN(t)
		return mustOpen(t, dsn), mustOpen(t, dsn)
	})
}

func TestStore_WebhookOutbox(t *testing.T) {
	storetest.WebhookOutbox(t, func(t *testing.T) (rappel.WebhookOutbox, rappel.WebhookOutbox) {
		dsn := pgtest.DSN(t)
		return mustOpen(t, dsn), mustOpen(t, dsn)
	})
}
