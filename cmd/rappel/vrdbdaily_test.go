package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest/guesttest"
)

// TestServe_VRDBDaily starts the server with --feed-tc-vrdb-daily beside
// the vehicle file: the extract as Transport Canada's CRLF download
// writes it (line breaks inside comments and all), cut to the rows of one
// recall the full file does not have. After the first refresh the recall
// is served from /recall/{id}, and the full file's recalls still are.
func TestServe_VRDBDaily(t *testing.T) {
	real := guesttest.RealSample(t, "tc-vrdb-daily-2023-01-17-crlf.csv")
	// The header, then recall 2023005's rows, as written.
	cr := csv.NewReader(bytes.NewReader(real))
	if _, err := cr.Read(); err != nil {
		t.Fatal(err)
	}
	daily := bytes.Clone(real[:cr.InputOffset()])
	for {
		at := cr.InputOffset()
		row, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if row[0] == "2023005" {
			daily = append(daily, real[at:cr.InputOffset()]...)
		}
	}
	if n := bytes.Count(daily, []byte("\r\n\"2023005\",")); n != 24 {
		t.Fatalf("the extract cut holds %d rows of 2023005, want 24", n)
	}

	up := sampleUpstream(t)
	up.Set("/tc/vrdb_60days_daily.csv", daily)
	bundleDir := mustFetchBundle(t, up)
	c := NewServeCommand()
	err := c.ParseFlags([]string{
		"--data-dir", t.TempDir(), "--api-keys", "k1", "--feeds", "on",
		"--feed-hc-en", up.URL + "/hc/recalls-en.json", "--feed-hc-fr", up.URL + "/hc/recalls-fr.json",
		"--feed-tc-vrdb", up.URL + "/tc/vrdb.csv", "--feed-tc-vrdb-daily", up.URL + "/tc/vrdb_60days_daily.csv",
		"--feed-detail", up.URL + "/detail/{lang}/{id}.json", "--refresh-interval", "1h", "--feed-detail-rate", "0",
	})
	if err != nil {
		t.Fatal(err)
	}
	c.Bundle = os.DirFS(bundleDir)
	base, _ := serve(t, c)
	waitLive(t, base)
	for _, f := range health(t, base).Feeds {
		if f.Source == "vrdb" && (f.LastError != "" || len(f.Problems) != 0 || up.Hits("/tc/vrdb_60days_daily.csv") == 0) {
			t.Fatalf("vrdb after the first refresh: %+v", f)
		}
	}
	code, r := record(t, base, "tc-2023005")
	if code != 200 || r.Status != rappel.StatusActive || r.RecallID != "2023005" || r.Manufacturer == "" || len(r.AffectedModels) == 0 {
		t.Fatalf("GET /recall/tc-2023005 = %d %+v", code, r)
	}
	if code, _ := record(t, base, "tc-2018123"); code != 200 {
		t.Fatalf("GET /recall/tc-2018123, of the full file = %d", code)
	}
}
