package postgres

import (
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/postgres/pgtest"
	"github.com/rappel-ca/rappel/kv/storetest"
)

func TestStore_SubscriptionStore(t *testing.T) {
	// Pages of 20, so that the suite's 46 subscriptions take three.
	defer func(n int) { subscriptionPage = n }(subscriptionPage)
	subscriptionPage = 20
	storetest.SubscriptionStore(t, func(t *testing.T) (rappel.SubscriptionStore, rappel.SubscriptionStore) {
		dsn := pgtest.DSN(t)
		return mustOpen(t, dsn), mustOpen(t, dsn)
	})
}

func TestStore_ConfirmOutbox(t *testing.T) {
	storetest.ConfirmOutbox(t, func(t *testing.T) (storetest.ConfirmStore, storetest.ConfirmStore) {
		dsn := pgtest.DSN(t)
		return mustOpen(t, dsn), mustOpen(t, dsn)
	})
}

func TestStore_Outbox(t *testing.T) {
	storetest.Outbox(t, func(t *testing.T) (rappel.Outbox, rappel.Outbox) {
		dsn := pgtest.DSN(t)
		return mustOpen(t, dsn), mustOpen(t, dsn)
	})
}

// TestStore_OutboxDepth counts the fleet's pending e-mails as the Pebble
// store counts a node's, with rows written by one node and sent by the
// other.
func TestStore_OutboxDepth(t *testing.T) {
	storetest.OutboxDepth(t, func(t *testing.T) (storetest.DepthStore, storetest.DepthStore) {
		dsn := pgtest.DSN(t)
		return mustOpen(t, dsn), mustOpen(t, dsn)
	})
}
