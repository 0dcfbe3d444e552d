package feeds

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestRefresher_FetchDetails checks the politeness of detail requests: at
// most DetailConcurrency at once, at most DetailRate a second, in the
// order given (newest notice first), and a deadline that leaves the rest
// pending.
func TestRefresher_FetchDetails(t *testing.T) {
	var inFlight, most atomic.Int32
	var mu sync.Mutex
	var order []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		mu.Lock()
		order = append(order, r.URL.Path)
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		if r.URL.Path == "/fr/3.json" {
			http.NotFound(w, r)
			return
		}
		if r.URL.Path == "/en/4.json" {
			w.Write([]byte("<html>oops</html>"))
			return
		}
		fmt.Fprintf(w, `{"recallId": %q}`, r.URL.Path)
	}))
	defer srv.Close()
	r := NewRefresher(nil, nil, Detail(srv.URL+"/{lang}/{id}.json"))
	r.Fetcher = NewFetcher()
	r.Fetcher.Logger = nil
	r.DetailConcurrency, r.DetailRate = 2, 40
	nids := []string{"1", "2", "3", "4", "10", "11", "12", "13", "14", "15"}
	start := time.Now()
	got, problems := r.fetchDetails(context.Background(), r.Sources[0], detailOrder(nids, nil), map[string]string{"3": "v3"}, nil)
	took := time.Since(start)
	mu.Lock()
	first := append([]string(nil), order[:2]...)
	mu.Unlock()
	if most.Load() > 2 {
		t.Errorf("%d requests at once, want at most 2", most.Load())
	}
	// 20 requests at 40 a second take about half a second.
	if took < 400*time.Millisecond {
		t.Errorf("20 requests took %s: faster than 40 a second", took)
	}
	if first[0] != "/en/15.json" && first[1] != "/en/15.json" {
		t.Errorf("first requests %v, want the newest notice (15) first", first)
	}
	if len(got) != 9 || len(problems) != 1 || problems[0].RecordID != "hc-4" {
		t.Fatalf("got %d notices, problems %+v; want 9 and notice 4's HTML refused", len(got), problems)
	}
	for _, raw := range got {
		if raw.Key == "3" && (raw.Version != "v3" || len(raw.IDs) != 1) {
			t.Errorf("notice 3 (no French document): %+v", raw)
		}
	}

	t.Run("Deadline", func(t *testing.T) {
		r.DetailRate = 20
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		got, problems := r.fetchDetails(ctx, r.Sources[0], nids, nil, nil)
		// Not a timing assertion: 20 requests at 20 a second cannot all
		// fit in 0.3 s, however fast the machine.
		if len(got) >= len(nids) || len(problems) != 0 {
			t.Fatalf("with a deadline: %d fetched, %d problems; want some left pending and no problem", len(got), len(problems))
		}
	})
}

// TestDetailOrder: new notices, whose records wait for their documents,
// come before changed ones, each newest first.
func TestDetailOrder(t *testing.T) {
	got := detailOrder([]string{"7", "12", "9"}, []string{"100", "3", "11"})
	want := []string{"12", "9", "7", "100", "11", "3"}
	if !slices.Equal(got, want) {
		t.Fatalf("detailOrder = %v, want %v", got, want)
	}
}
