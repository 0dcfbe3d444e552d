package kv

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
)

// TestStore_NotOpen checks that every reader and writer of a store that is
// not open answers errNotOpen, whatever way it reaches the database: the
// open check (ready), the batch preamble (write, writeLocked), the single
// key helpers (get, putValue) and the scans.
func TestStore_NotOpen(t *testing.T) {
	ctx := context.Background()
	s := NewStore(t.TempDir())
	now := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	row := &rappel.AlertRow{Sub: "s1", Record: "hc-1", OutboxState: rappel.OutboxState{Seq: 1, Status: rappel.AlertPending, CreatedAt: now, NextAt: now}}
	sub := &rappel.Subscription{ID: "s1", Status: rappel.SubPending, CreatedAt: now}
	hook := &rappel.Webhook{ID: "wh_1", Key: "k1"}
	list := &rappel.Watchlist{ID: "wl1", Key: "k1", Size: 1, CreatedAt: now}
	hit := &rappel.WatchHit{ID: "h1", Watchlist: "wl1", Item: "sku-1", MatchedAt: now}
	for name, call := range map[string]func() error{
		"PutRecords":     func() error { return s.PutRecords(ctx, []*rappel.Record{{RecordID: "hc-1"}}) },
		"DeleteRecords":  func() error { return s.DeleteRecords(ctx, []string{"hc-1"}) },
		"ForEachRecord":  func() error { return s.ForEachRecord(ctx, func(*rappel.Record) error { return nil }) },
		"Load":           func() error { return s.Load(ctx, nil, nil, nil, nil, rappel.DatasetInfo{}) },
		"DatasetInfo":    func() error { _, err := s.DatasetInfo(ctx); return err },
		"SetDatasetInfo": func() error { return s.SetDatasetInfo(ctx, rappel.DatasetInfo{}) },
		"SourceState":    func() error { _, err := s.SourceState(ctx, "hcdump"); return err },
		"Partials":       func() error { _, err := s.Partials(ctx, "hcdump", []string{"hc-1"}); return err },
		"IndexState":     func() error { _, err := s.IndexState(ctx); return err },
		"TrimChanges":    func() error { return s.TrimChanges(ctx, 1) },
		"AddUsage":       func() error { _, err := s.AddUsage(ctx, "2026-11", map[string]int64{"k1": 1}); return err },
		"LoadUsage":      func() error { _, err := s.LoadUsage(ctx, "2026-11"); return err },
		"CommitMatches":  func() error { _, err := s.CommitMatches(ctx, []string{"hc-1"}, []*rappel.AlertRow{row}); return err },
		"ClaimAlerts":    func() error { _, err := s.ClaimAlerts(ctx, "n1", now, time.Minute, 10); return err },
		"UpdateAlerts":   func() error { _, err := s.UpdateAlerts(ctx, "n1", []*rappel.AlertRow{row}); return err },
		"PruneAlerts":    func() error { _, _, err := s.PruneAlerts(ctx, now); return err },
		"CommitEvents": func() error {
			_, err := s.CommitEvents(ctx, []string{"k"}, rappel.Deliveries([]*rappel.AlertRow{row}))
			return err
		},
		"ClaimDeliveries":    func() error { _, err := s.ClaimDeliveries(ctx, "n1", now, time.Minute, 10); return err },
		"CreateSubscription": func() error { return s.CreateSubscription(ctx, sub, nil) },
		"CreatePending":      func() error { _, err := s.CreatePending(ctx, sub, nil, row, nil); return err },
		"PutSubscription":    func() error { return s.PutSubscription(ctx, sub) },
		"Subscription":       func() error { _, err := s.Subscription(ctx, "s1"); return err },
		"AddToken":           func() error { return s.AddToken(ctx, "s1", "manage", [32]byte{}) },
		"DeletePendingBefore": func() error {
			_, err := s.DeletePendingBefore(ctx, now)
			return err
		},
		"TakeAllowance":         func() error { _, _, err := s.TakeAllowance(ctx, "a", 1, now, now.Add(time.Hour)); return err },
		"DeleteAllowancesEnded": func() error { _, err := s.DeleteAllowancesEnded(ctx, now); return err },
		"CreateWebhook":         func() error { return s.CreateWebhook(ctx, hook, 10) },
		"Webhook":               func() error { _, err := s.Webhook(ctx, "wh_1"); return err },
		"CreateWatchlist": func() error {
			return s.CreateWatchlist(ctx, list, []rappel.WatchedItem{{Item: rappel.CatalogItem{ID: "sku-1"}, Keys: []string{"b:acme"}}}, 10)
		},
		"Watchlist":       func() error { _, err := s.Watchlist(ctx, "wl1"); return err },
		"Watchlists":      func() error { _, err := s.Watchlists(ctx, "k1"); return err },
		"WatchItems":      func() error { _, err := s.WatchItems(ctx, "wl1", "", 10); return err },
		"DeleteWatchlist": func() error { return s.DeleteWatchlist(ctx, "wl1") },
		"WatchedItems": func() error {
			return s.WatchedItems(ctx, []string{"b:acme"}, []string{"g:0006"}, func(*rappel.WatchedItem) error { return nil })
		},
		"AddWatchHits":       func() error { return s.AddWatchHits(ctx, []*rappel.WatchHit{hit}) },
		"AddWatchHits(none)": func() error { return s.AddWatchHits(ctx, nil) },
		"WatchHits":          func() error { _, err := s.WatchHits(ctx, "wl1", "", 10); return err },
		"SetWatchHitHandled": func() error { _, err := s.SetWatchHitHandled(ctx, "wl1", "h1", now); return err },
	} {
		if err := call(); !errors.Is(err, errNotOpen) {
			t.Errorf("%s on a store not open: %v, want errNotOpen", name, err)
		}
	}
}
