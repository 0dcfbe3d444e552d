package kv

import (
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/storetest"
)

func TestStore_IdempotencyStore(t *testing.T) {
	storetest.IdempotencyStore(t, func(t *testing.T) (rappel.IdempotencyStore, rappel.IdempotencyStore) {
		st := mustAlertStore(t)
		return st, st
	})
}
