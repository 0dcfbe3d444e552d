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
	"runtime"
	"testing"
	"testing/fstest"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/judged"
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
	run := func(name string, files fstest.MapFS, normalize guest.Normalizer) []*rappel.Record {
		out := guesttest.MustRun(t, files, normalize)
		t.Logf("%s: %d records, %d problems", name, len(out.Records), len(out.Problems))
		return out.Records
	}
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
	recs, problems := rappel.Assemble(time.Date(2026, 8, 16, 0, 0, 0, 0, time.UTC),
		run("dump 2026 (CSV)", fstest.MapFS{"recalls-en.json": {Data: dump2026}}, hcdump.Normalize),
		run("dump 2025", fstest.MapFS{"recalls-en.json": {Data: dump}}, hcdump.Normalize),
		run("vrdb 2023-01-13", fstest.MapFS{"vrdb.csv": {Data: vehicles}}, vrdb.Normalize))
	if len(problems) > 0 {
		t.Fatalf("assembling the real records: %d problems, first %+v", len(problems), problems[0])
	}
	return recs
}
