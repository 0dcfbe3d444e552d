package main

import (
	"os"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/bundle"
)

// TestServe_NewBundle starts a node on the tiny bundle, then restarts it
// on the same data dir with a newer bundle, as a new binary would: the data
// dir, never refreshed live, now serves the newer bundle alone.
func TestServe_NewBundle(t *testing.T) {
	dataDir := t.TempDir()
	start := func(src func(testing.TB) string) healthBody {
		t.Helper()
		c := NewServeCommand()
		c.DataDir, c.Bundle = dataDir, os.DirFS(src(t))
		base, stop := serve(t, c)
		defer stop()
		return health(t, base)
	}
	first := start(tinyBundleDir)
	if first.Records != 1 || first.DatasetSource != "bundle" {
		t.Fatalf("first start: %+v", first)
	}
	built := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	newer := func(tb testing.TB) string {
		dir := tb.TempDir()
		var recs []*rappel.Record
		for _, id := range []string{"hc-80001", "hc-80002"} {
			recs = append(recs, &rappel.Record{
				RecordID: id, RecallID: id[3:], RecallType: rappel.TypeFood, Agency: rappel.AgencyCFIA,
				Status: rappel.StatusActive, EventDate: "2025-05-30", RecallDate: "2025-05-30", FetchedAt: "2025-06-01T00:00:00Z",
				Translations: rappel.Translations{EN: &rappel.Translation{Title: "Oat crackers recalled " + id}},
			})
		}
		if err := bundle.Write(dir, recs, bundle.Manifest{BuiltAt: built}); err != nil {
			tb.Fatal(err)
		}
		return dir
	}
	second := start(newer)
	if second.Records != 2 || !second.DatasetUpdatedAt.Equal(built) || second.DatasetSource != "bundle" {
		t.Fatalf("restart on a newer bundle: %+v, want its 2 records", second)
	}
}
