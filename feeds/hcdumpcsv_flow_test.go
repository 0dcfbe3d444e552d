package feeds_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel/plugins/guest/guesttest"
)

// TestRefresh_HCDumpCSVFallback refreshes the dump through the shipped
// plugin in wazero from a loopback upstream serving the agency's real CSV
// form (August 2026) beside a JSON of the same rows. Once the JSON is cut
// off inside a string, as the English JSON was for months in early 2024,
// the refresh reads the CSV of the same day instead: the row only it
// holds is served, every other record is as the JSON made it, and the
// source's problems say so. The CSV is fetched only then, and while the
// JSON stays broken conditionally; a CSV that cannot stand in either
// fails the refresh, keeping the last good data; a JSON that parses again
// is read again, and the problem goes.
func TestRefresh_HCDumpCSVFallback(t *testing.T) {
	real := guesttest.RealSample(t, "pages/stophurting-2026-08-16-ca-recalls-opendata-sample.csv")
	table, err := csv.NewReader(bytes.NewReader(real)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]string
	for _, rec := range table[1:] {
		row := map[string]string{}
		for i, key := range table[0] {
			row[key] = rec[i]
		}
		rows = append(rows, row)
	}
	dump := func(rows []map[string]string) []byte {
		b, err := json.Marshal(rows)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	newest := rows[0] // NID 82496, only in the CSV and the broken JSON
	const enJSON, enCSV, frJSON = "/hc/recalls-en.json", "/hc/recalls-en.csv", "/hc/recalls-fr.json"

	h := newHarness(t)
	h.r.Sources = h.r.Sources[:1] // the dump alone
	h.up.Set(enJSON, dump(rows[1:]))
	h.up.Set(frJSON, []byte("[]"))
	h.up.Set(enCSV, real)
	h.open()
	h.mustRefresh()
	before := h.records()
	if len(before) < 300 || h.record("hc-"+newest["NID"]) != nil || h.up.Hits(enCSV) != 0 {
		t.Fatalf("from the JSON: %d records, the CSV fetched %d times", len(before), h.up.Hits(enCSV))
	}

	// The JSON cut off inside a title.
	full := dump(rows)
	at := bytes.Index(full, []byte(`"Title":"`+rows[200]["Title"][:20]))
	h.up.Set(enJSON, full[:at+len(`"Title":"`)+10])
	h.mustRefresh()
	if h.up.Hits(enCSV) != 1 {
		t.Errorf("the CSV was fetched %d times, want once", h.up.Hits(enCSV))
	}
	rec := h.record("hc-" + newest["NID"])
	if rec == nil || rec.Title("en") != newest["Title"] {
		t.Fatalf("NID %s, only in the CSV: %+v", newest["NID"], rec)
	}
	after := h.records()
	for id, b := range before {
		if after[id] != b {
			t.Errorf("%s read from the CSV is not what the JSON made of it:\n%s\n%s", id, after[id], b)
		}
	}
	if len(after) != len(before)+1 {
		t.Errorf("%d records from the CSV, %d from the JSON", len(after), len(before))
	}
	fallback := func() string {
		for _, p := range h.state("hcdump").Problems {
			if strings.Contains(p.Reason, "was read in its place") {
				return p.Reason
			}
		}
		return ""
	}
	if p := fallback(); !strings.Contains(p, "recalls-en.json ("+h.up.URL+enJSON+") does not parse: the document is not valid JSON at byte") ||
		!strings.Contains(p, "Its other form of the same day, recalls-en.csv ("+h.up.URL+enCSV+", last modified ") {
		t.Errorf("the problem %q does not say the CSV stood in for the JSON", p)
	}
	t.Logf("%d records; the problem: %s", len(after), fallback())
	if st := h.state("hcdump"); st.LastError != "" || st.Stale {
		t.Errorf("state %+v", st)
	}

	// Nothing modified: both asked for conditionally, the CSV still read.
	h.up.ResetHits()
	h.mustRefresh()
	if p := fallback(); h.up.Hits(enCSV) != 1 || !strings.Contains(p, "is not modified since it did not parse") {
		t.Errorf("the CSV fetched %d times, problem %q", h.up.Hits(enCSV), p)
	}
	if got := h.records(); len(got) != len(after) {
		t.Errorf("%d records, want %d", len(got), len(after))
	}

	// A new day's JSON, still broken, and the CSV unchanged (304): its
	// rows, as stored, keep serving.
	h.up.Set(enJSON, full[:at+len(`"Title":"`)+15])
	h.mustRefresh()
	if st := h.state("hcdump"); st.LastError != "" || len(h.records()) != len(after) || fallback() == "" {
		t.Errorf("a broken JSON beside an unchanged CSV: state %+v, %d records", st, len(h.records()))
	}

	// The CSV broken too: the refresh fails and the last good data stays.
	h.up.Set(enJSON, full[:at+len(`"Title":"`)+12])
	h.up.Set(enCSV, []byte("<html>Service unavailable</html>"))
	if err := h.refresh(); err == nil || !strings.Contains(err.Error(), "not valid JSON") || !strings.Contains(err.Error(), "its fallback recalls-en.csv could not stand in") {
		t.Errorf("both broken: %v", err)
	}
	if got := h.records(); len(got) != len(after) || h.record("hc-"+newest["NID"]) == nil {
		t.Errorf("both broken: %d records, want the last good %d", len(got), len(after))
	}

	// The JSON whole again: read, the CSV not fetched, the problem gone.
	h.up.Set(enJSON, full)
	h.up.ResetHits()
	h.mustRefresh()
	if h.up.Hits(enCSV) != 0 || fallback() != "" || len(h.records()) != len(after) {
		t.Errorf("the JSON whole again: the CSV fetched %d times, problem %q, %d records", h.up.Hits(enCSV), fallback(), len(h.records()))
	}
}
