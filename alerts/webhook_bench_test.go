package alerts

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/index"
	"github.com/rappel-ca/rappel/kv/kvtest"
)

// BenchmarkWebhooks_CommitToReceipt measures one node's delivery: per
// iteration a batch of new recalls (benchRecords of them) is matched
// against benchHooks endpoints on a Pebble store on disk, and the sender
// posts the deliveries to a local HTTPS receiver. It reports deliveries
// per second and the time from the start of the match (the refresh has
// committed the records) to each delivery's receipt, at the median and
// 99th percentile.
func BenchmarkWebhooks_CommitToReceipt(b *testing.B) {
	const benchHooks, benchRecords = 10, 10
	ctx := context.Background()
	var mu sync.Mutex
	var received []time.Time
	srv, pool, _ := tlsReceiver(b, func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		mu.Lock()
		received = append(received, now)
		mu.Unlock()
	})
	st := kvtest.Open(b)
	s := NewHookSender()
	s.Outbox, s.Hooks, s.Logger = st, st, st.Logger
	s.Client.RootCAs, s.Client.AllowHTTPLoopback = pool, true
	svc := NewHookService(st, s)
	for i := range benchHooks {
		u := fmt.Sprintf("%s/hook/%d", srv.URL, i)
		if _, err := svc.Create(ctx, "k1", &rappel.WebhookRequest{URL: &u}); err != nil {
			b.Fatal(err)
		}
	}
	m := NewHookMatcher(index.Engine{})
	m.Hooks, m.Outbox, m.Records, m.Logger = st, st, st, st.Logger
	var lat []time.Duration
	var posting time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		ids := make([]string, benchRecords)
		recs := make([]*rappel.Record, benchRecords)
		for j := range ids {
			ids[j] = fmt.Sprintf("hc-%d-%d", i, j)
			recs[j] = newRecord(ids[j], "Recall "+ids[j])
		}
		if err := st.PutRecords(ctx, recs); err != nil {
			b.Fatal(err)
		}
		mu.Lock()
		received = received[:0]
		mu.Unlock()
		b.StartTimer()
		start := time.Now()
		if _, err := m.Match(ctx, &rappel.RecordEvents{Seq: uint64(i + 1), At: start, Created: ids}); err != nil {
			b.Fatal(err)
		}
		n, err := s.SendDue(ctx)
		if err != nil || n != benchHooks*benchRecords {
			b.Fatalf("sent %d, %v; want %d", n, err, benchHooks*benchRecords)
		}
		posting += time.Since(start)
		mu.Lock()
		for _, t := range received {
			lat = append(lat, t.Sub(start))
		}
		mu.Unlock()
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(len(lat))/posting.Seconds(), "deliveries/s")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(lat[0].Microseconds())/1000, "first-ms")
}
