package postgres

import (
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/postgres/pgtest"
	"github.com/rappel-ca/rappel/kv/storetest"
)

func TestStore_KeyStore(t *testing.T) {
	storetest.KeyStore(t, func(t *testing.T) (rappel.KeyStore, rappel.KeyStore) {
		dsn := pgtest.DSN(t)
		return mustOpen(t, dsn), mustOpen(t, dsn)
	})
}

func TestStore_QuotaStore(t *testing.T) {
	storetest.QuotaStore(t, func(t *testing.T) (rappel.QuotaStore, rappel.QuotaStore) {
		dsn := pgtest.DSN(t)
		return mustOpen(t, dsn), mustOpen(t, dsn)
	})
}
