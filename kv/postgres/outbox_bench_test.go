package postgres

import (
	"context"
	"testing"

	"github.com/rappel-ca/rappel/kv/postgres/pgtest"
	"github.com/rappel-ca/rappel/kv/storetest"
)

// benchmarkAlertDepth counts the e-mails of an alert outbox of 100,000
// rows, one in pendingEvery pending and the rest sent (the rows the
// retention keeps), each pending row an e-mail of its own: the query each
// scrape of each node of a fleet makes.
func benchmarkAlertDepth(b *testing.B, pendingEvery int) {
	ctx := context.Background()
	s := mustOpen(b, pgtest.DSN(b))
	const n = 100_000
	storetest.FillAlertOutbox(b, s, n, pendingEvery)
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
