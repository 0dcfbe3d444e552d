package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/postgres/pgtest"
)

// benchmarkAlertDepth counts the e-mails of an alert outbox of 100,000
// rows, one in pendingEvery pending and the rest sent (the rows the
// retention keeps), each pending row an e-mail of its own: the query each
// scrape of each node of a fleet makes.
func benchmarkAlertDepth(b *testing.B, pendingEvery int) {
	ctx := context.Background()
	s := mustOpen(b, pgtest.DSN(b))
	t0 := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	const n = 100_000
	for chunk := 0; chunk < n; chunk += 10_000 {
		var ids []string
		var rows []*rappel.AlertRow
		for i := chunk; i < chunk+10_000; i++ {
			id := fmt.Sprintf("hc-%d", i)
			status := rappel.AlertSent
			if i%pendingEvery == 0 {
				status = rappel.AlertPending
			}
			ids = append(ids, id)
			rows = append(rows, &rappel.AlertRow{Sub: fmt.Sprintf("sub%05d", i%5000), Record: id,
				OutboxState: rappel.OutboxState{Seq: uint64(i / 5000), Status: status, CreatedAt: t0, NextAt: t0}})
		}
		if _, err := s.CommitMatches(ctx, ids, rows); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := s.pool.Exec(ctx, `ANALYZE alert_outbox`); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if d, err := s.AlertDepth(ctx); err != nil || d.Mails != n/pendingEvery {
			b.Fatalf("AlertDepth = %+v, %v", d, err)
		}
	}
}

func BenchmarkStore_AlertDepth10k(b *testing.B)  { benchmarkAlertDepth(b, 10) }
func BenchmarkStore_AlertDepth100k(b *testing.B) { benchmarkAlertDepth(b, 1) }
