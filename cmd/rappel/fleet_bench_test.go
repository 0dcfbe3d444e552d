package main

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/rappel-ca/rappel/alerts/smtptest"
)

// BenchmarkFleet_Propagation runs a fleet of three nodes on one PostgreSQL
// and makes 50 refreshes on its leader, each of 100 new notices upstream.
// It reports, over the refreshes, how long after the leader's refresh
// returned (its publication committed) every node served the new dataset
// version (p50, p99, max), and how many times the dumps were fetched per
// refresh, for the whole fleet.
func BenchmarkFleet_Propagation(b *testing.B) {
	const refreshes, perRefresh = 50, 100
	f := newFleetEnv(b).withStore(b)
	smtp := smtptest.MustStart(b)
	nodes := f.startNodes(b, 3, smtp.Addr, false)
	leader := leaderOf(b, nodes...)
	var took []time.Duration
	fetches := 0
	nid := 80000
	b.ResetTimer()
	for range b.N {
		took, fetches = took[:0], 0
		for range refreshes {
			for range perRefresh {
				f.addRecall(b, fmt.Sprint(nid), fmt.Sprintf("Brand %d frozen peas recalled due to Listeria", nid))
				nid++
			}
			f.up.ResetHits()
			refreshEach(b, leader)
			done := time.Now()
			want := health(b, leader).DatasetVersion
			for _, n := range nodes {
				for health(b, n).DatasetVersion < want {
					time.Sleep(5 * time.Millisecond)
				}
			}
			took = append(took, time.Since(done))
			fetches += f.up.Hits("/hc/")
		}
	}
	b.StopTimer()
	slices.Sort(took)
	q := func(p float64) float64 { return took[int(p*float64(len(took)-1))].Seconds() }
	b.ReportMetric(q(0.5), "p50-s")
	b.ReportMetric(q(0.99), "p99-s")
	b.ReportMetric(took[len(took)-1].Seconds(), "max-s")
	b.ReportMetric(float64(fetches)/refreshes, "dump-fetches/refresh")
}
