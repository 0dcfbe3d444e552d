package postgres

import (
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/postgres/pgtest"
	"github.com/rappel-ca/rappel/kv/storetest"
)

func TestStore_IdempotencyStore(t *testing.T) {
	storetest.IdempotencyStore(t, func(t *testing.T) (rappel.IdempotencyStore, rappel.IdempotencyStore) {
		dsn := pgtest.DSN(t)
		return mustOpen(t, dsn), mustOpen(t, dsn)
	})
}
