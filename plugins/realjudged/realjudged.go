// Package realjudged loads what the graded judged set of real notices
// (testdata/judged-real) is measured on: the records Rappel makes of the real
// agency files kept beside the repository, and the set itself. It is for
// tests.
package realjudged

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"
	"testing/fstest"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/judged"
	"github.com/rappel-ca/rappel/plugins/detail"
	"github.com/rappel-ca/rappel/plugins/guest"
	"github.com/rappel-ca/rappel/plugins/guest/guesttest"
	"github.com/rappel-ca/rappel/plugins/hcdump"
	"github.com/rappel-ca/rappel/plugins/vrdb"
)

// Set returns the graded judged set of real notices,
// testdata/judged-real/queries.tsv.
func Set(t testing.TB) []judged.Graded {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	f, err := os.Open(filepath.Join(filepath.Dir(here), "..", "..", "testdata", "judged-real", "queries.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	qs, err := judged.ReadGraded(f)
	if err != nil {
		t.Fatalf("testdata/judged-real/queries.tsv: %v", err)
	}
	return qs
}

// Notices returns the records Rappel makes of the real agency files
// beside the repository (../shared/real): Health Canada's dump of June 2025,
// its CSV form of August 2026 (read as the dump, the way the feed's CSV
// fallback reads it), and Transport Canada's whole daily extract of
// 2023-01-13, each through its shipped normalizer and merged as a refresh
// merges them (rappel.SourcePrecedence, the newer dump first). The test is
// skipped when the files are absent, and fails then under RAPPEL_CI.
func Notices(t testing.TB) []*rappel.Record {
	t.Helper()
	return assemble(t, sourceParts(t)...)
}

// Products returns the records of Notices with the products the real
// recall pages list: the live pages kept among the real samples
// (pages/*-<NID>-<lang>.html) and the pages of RadarFile written back in
// the live markup (RadarRecord.Page), read by the shipped detail
// normalizer and merged before the dumps, as a refresh merges the detail
// source's records (rappel.SourcePrecedence). Their products carry the
// barcodes, lot codes and model numbers the notices print.
func Products(t testing.TB) []*rappel.Record {
	t.Helper()
	pages := fstest.MapFS{}
	dir := guesttest.RealDir(t, "pages")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if m := pageName.FindStringSubmatch(e.Name()); m != nil {
			pages[m[2]+"/"+m[1]+".html"] = &fstest.MapFile{Data: guesttest.RealSample(t, filepath.Join("pages", e.Name()))}
		}
	}
	for _, r := range Radar(t) {
		if len(r.Detail.Products) > 0 {
			pages["en/"+r.NID+".html"] = &fstest.MapFile{Data: []byte(r.Page(true))}
		}
	}
	parts := sourceParts(t)
	listed := map[string]bool{}
	for _, part := range parts {
		for _, r := range part {
			listed[r.RecordID] = true
		}
	}
	// A page of a notice no dump lists is left out, as a refresh leaves
	// it: the page alone gives no recall type, so its record is no
	// servable record.
	var read []*rappel.Record
	for _, r := range run(t, "recall pages", pages, detail.Normalize) {
		if listed[r.RecordID] {
			read = append(read, r)
		} else {
			t.Logf("recall pages: %s left out, no dump lists it", r.RecordID)
		}
	}
	return assemble(t, append([][]*rappel.Record{read}, parts...)...)
}

// pageName finds a real page's notice and language in its file name
// ("…-page-82165-en.html", "…-nid48704-fr.html").
var pageName = regexp.MustCompile(`(?:page-|nid)(\d+)-(en|fr)\.html$`)

// run normalizes files with normalize, logging what it made.
func run(t testing.TB, name string, files fstest.MapFS, normalize guest.Normalizer) []*rappel.Record {
	t.Helper()
	out := guesttest.MustRun(t, files, normalize)
	t.Logf("%s: %d records, %d problems", name, len(out.Records), len(out.Problems))
	return out.Records
}

// sourceParts returns the records of Notices' files, source by source, in
// the order they are merged.
func sourceParts(t testing.TB) [][]*rappel.Record {
	t.Helper()
	dump := guesttest.RealSample(t, "hc-dump-en-2025-06.json")
	table, err := csv.NewReader(bytes.NewReader(guesttest.RealSample(t, "pages/stophurting-2026-08-16-ca-recalls-opendata-sample.csv"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]map[string]string, 0, len(table))
	for _, rec := range table[1:] {
		row := map[string]string{}
		for i, key := range table[0] {
			row[key] = rec[i]
		}
		rows = append(rows, row)
	}
	dump2026, err := json.Marshal(rows)
	if err != nil {
		t.Fatal(err)
	}
	vehicles := guesttest.RealSample(t, "tc-vrdb-daily-2023-01-13-whole.csv")
	return [][]*rappel.Record{
		run(t, "dump 2026 (CSV)", fstest.MapFS{"recalls-en.json": {Data: dump2026}}, hcdump.Normalize),
		run(t, "dump 2025", fstest.MapFS{"recalls-en.json": {Data: dump}}, hcdump.Normalize),
		run(t, "vrdb 2023-01-13", fstest.MapFS{"vrdb.csv": {Data: vehicles}}, vrdb.Normalize),
	}
}

// assemble merges parts as a refresh of 2026-08-16 would.
func assemble(t testing.TB, parts ...[]*rappel.Record) []*rappel.Record {
	t.Helper()
	recs, problems := rappel.Assemble(time.Date(2026, 8, 16, 0, 0, 0, 0, time.UTC), parts...)
	if len(problems) > 0 {
		t.Fatalf("assembling the real records: %d problems, first %+v", len(problems), problems[0])
	}
	return recs
}
