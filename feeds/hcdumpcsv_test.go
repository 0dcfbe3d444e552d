package feeds

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel/internal/hcvocab"
	"github.com/rappel-ca/rappel/plugins/guest/guesttest"
)

// csvRows decodes what hcCSVToJSON wrote, failing unless it is a JSON
// array of objects of strings.
func csvRows(tb testing.TB, doc []byte) []map[string]string {
	tb.Helper()
	var rows []map[string]string
	if err := json.Unmarshal(doc, &rows); err != nil {
		tb.Fatalf("the CSV was written as %q, not an array of objects of strings: %v", truncateText(string(doc), 300), err)
	}
	return rows
}

// TestHCCSV_Real reads the dump's real CSV form (August 2026, 375 rows):
// every row, every column under the JSON's key, no problem; and the
// pandas tables of 2023 and 2024, whose header is their own, by their
// columns' names with one problem saying so.
func TestHCCSV_Real(t *testing.T) {
	real := guesttest.RealSample(t, "pages/stophurting-2026-08-16-ca-recalls-opendata-sample.csv")
	doc, problems, err := hcCSVToJSON(hcFileEN, real)
	if err != nil || len(problems) > 0 {
		t.Fatalf("err %v, problems %q", err, problems)
	}
	rows := csvRows(t, doc)
	want, err := csv.NewReader(bytes.NewReader(real)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 375 || len(rows) != len(want)-1 {
		t.Fatalf("%d rows, want 375", len(rows))
	}
	for i, row := range rows {
		for c, key := range hcvocab.DumpColumnsEN {
			if got, ok := row[key]; !ok || got != want[i+1][c] {
				t.Fatalf("row %d: %s = %q, %v; want %q", i+1, key, got, ok, want[i+1][c])
			}
		}
	}
	if rows[0]["NID"] != "82496" || !strings.Contains(rows[1]["Title"], "Warn®") {
		t.Errorf("rows 1 and 2: %v, %v", rows[0], rows[1])
	}
	// The same, French: its English header read as the French keys.
	doc, problems, err = hcCSVToJSON(hcFileFR, real)
	if err != nil || len(problems) != 1 || !strings.Contains(problems[0], `"Title" as "Titre"`) {
		t.Fatalf("French: err %v, problems %q", err, problems)
	}
	if fr := csvRows(t, doc); len(fr) != 375 || fr[0]["Titre"] != rows[0]["Title"] || fr[0]["Problème"] != rows[0]["Issue"] {
		t.Errorf("French: %d rows, the first %v", len(fr), fr[0])
	}

	derived := guesttest.RealSample(t, "hc-dump-en-2024-05-derived-7cols-29648rows.csv")
	doc, problems, err = hcCSVToJSON(hcFileEN, derived)
	if err != nil || len(problems) != 1 || !strings.Contains(problems[0], `"recall_id" as "NID"`) || !strings.Contains(problems[0], `"data_received_at"`) {
		t.Fatalf("the pandas table: err %v, problems %q", err, problems)
	}
	if rows := csvRows(t, doc); len(rows) != 29648 || rows[0]["NID"] != "73357" || rows[0]["Organization"] != "Health Canada" || rows[0]["Last updated"] != "2024-01-29" {
		t.Errorf("the pandas table: %d rows, the first %v", len(rows), rows[0])
	}
}

// TestHCCSV_Forms reads the forms a CSV of the dump may take: every one is
// read, what is not the dump's own form is a problem, and only a CSV
// without NID is refused.
func TestHCCSV_Forms(t *testing.T) {
	header := "NID,Title,URL,Organization,Product,Issue,\"What you should do\",Category,\"Recall class\",\"Last updated\",Archived\n"
	row := "1,\"A \"\"quoted\"\" title\",/en/x,CFIA,Cheese,Listeria,\"Do not eat.\nThrow it out.\",Dairy,\"Class 1\",2026-01-02,0\n"
	for _, tc := range []struct {
		name, in string
		rows     int
		problem  string // "" for none
		err      string
	}{
		{"the dump's", header + row, 1, "", ""},
		{"CRLF and a BOM", "\ufeff" + strings.ReplaceAll(header+row, "\n", "\r\n"), 1, "", ""},
		{"no final line end", header + strings.TrimSuffix(row, "\n"), 1, "", ""},
		{"semicolons", strings.ReplaceAll(header+row, ",", ";"), 1, `separated by ';'`, ""},
		{"Windows-1252", header + "2,Caf\xe9,,CFIA,,,,,,,0\n", 1, "Windows-1252", ""},
		{"a column more", "Extra," + header + "x," + row, 1, `"Extra"`, ""},
		{"a pandas index", "," + header + "0," + row, 1, `"column 1"`, ""},
		{"a column missing", strings.Replace(header, ",Archived", "", 1) + strings.TrimSuffix(row, ",0\n") + "\n", 1, `columns missing: "Archived"`, ""},
		{"a short row", header + row + "2,cut off\n", 1, "record 2 (line 4, NID 2) has 2 fields, the header 11", ""},
		{"a broken quote", header + "2,\"Ti\"tle,,,,,,,,,0\n" + row, 1, "record 1 cannot be read", ""},
		{"cut inside a quote", header + row + "3,\"never closed,,,\n", 1, "cannot be read", ""},
		{"no rows", header, 0, "", ""},
		{"empty", "", 0, "", "it is empty"},
		{"no NID", "Title,URL\nx,y\n", 0, "", "no NID column"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, problems, err := hcCSVToJSON(hcFileEN, []byte(tc.in))
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			case err != nil:
				t.Fatal(err)
			case tc.problem == "" && len(problems) > 0,
				tc.problem != "" && !strings.Contains(strings.Join(problems, "|"), tc.problem):
				t.Errorf("problems %q, want %q", problems, tc.problem)
			}
			rows := csvRows(t, doc)
			if len(rows) != tc.rows {
				t.Fatalf("%d rows %v, want %d", len(rows), rows, tc.rows)
			}
			if tc.rows == 1 && rows[0]["NID"] == "1" && (rows[0]["Title"] != `A "quoted" title` || rows[0]["What you should do"] != "Do not eat.\nThrow it out.") {
				t.Errorf("row %v", rows[0])
			}
		})
	}
}

// FuzzHCCSV feeds hcCSVToJSON any bytes: it never panics; what it writes is
// always a JSON array of objects of strings that splitting reads; and a
// document that is not a well-formed CSV of the dump's header (a strict
// reader refuses it, or a record's length differs from the header's) gives
// a problem or an error, never a silent half-read.
func FuzzHCCSV(f *testing.F) {
	header := "NID,Title,URL,Organization,Product,Issue,\"What you should do\",Category,\"Recall class\",\"Last updated\",Archived\n"
	for _, s := range []string{
		header + "1,Title,/en/x,CFIA,Cheese,Listeria,\"Do not eat.\",Dairy,\"Class 1\",2026-01-02,0\n",
		header + "1,\"multi\nline\",,,,,,,,,0\r\n2,\"\"\"q\"\"\",,,,,,,,,1",
		header + "1,\"unterminated,,,,,,,,,0\n",
		header + "1,bare\"quote,,,,,,,,,0\n",
		header + "1,short\n",
		"\ufeffNID;Title\n1;x\n",
		"recall_id,organization,issue\n5,CFIA,Egg\n",
		"",
		"NID\n",
		"\xff\xfe",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		doc, problems, err := hcCSVToJSON(hcFileEN, in)
		if err != nil {
			return
		}
		rows := csvRows(t, doc)
		if _, err := jsonArray(hcFileEN, doc); err != nil {
			t.Fatalf("splitting what was written: %v", err)
		}
		strict := csv.NewReader(bytes.NewReader(skipBOM(in)))
		recs, serr := strict.ReadAll() // the header's length for every record
		wellFormed := serr == nil && len(recs) > 0 && strings.Join(recs[0], ",") == strings.Join(hcvocab.DumpColumnsEN, ",")
		if !wellFormed && len(problems) == 0 {
			t.Fatalf("%q is not a well-formed CSV of the dump (%v), yet no problem: %d rows", in, serr, len(rows))
		}
		if wellFormed && len(rows) != len(recs)-1 {
			t.Fatalf("%q: %d rows of %d records, problems %q", in, len(rows), len(recs)-1, problems)
		}
	})
}

// TestCSVBeside checks that the CSV beside the default JSON is the real
// CSV, on the same host, and that every other address keeps its own.
func TestCSVBeside(t *testing.T) {
	for in, want := range map[string]string{
		DefaultHCDumpEN: DefaultHCDumpENCSV,
		DefaultHCDumpFR: DefaultHCDumpFRCSV,
		"http://127.0.0.1:9/hc/recalls-en.json?key=k": "http://127.0.0.1:9/hc/recalls-en.csv?key=k",
		"https://example.org/dump.JSON":               "https://example.org/dump.csv",
		"https://example.org/dump":                    "",
		"https://example.org/dump.json.gz":            "",
	} {
		if got := CSVBeside(in); got != want {
			t.Errorf("CSVBeside(%q) = %q, want %q", in, got, want)
		}
	}
	src := HCDump(DefaultHCDumpEN, DefaultHCDumpFR)
	if fb := src.Docs[0].Fallback; fb == nil || fb.Name != "recalls-en.csv" || fb.URL != DefaultHCDumpENCSV || src.Docs[1].Fallback.Name != "recalls-fr.csv" {
		t.Errorf("the dump's fallbacks: %+v, %+v", src.Docs[0].Fallback, src.Docs[1].Fallback)
	}
	if src := HCDumpWithCSV(DefaultHCDumpEN, DefaultHCDumpFR, "", ""); src.Docs[0].Fallback != nil || src.Validate() != nil {
		t.Errorf("no fallback: %+v, %v", src.Docs[0].Fallback, src.Validate())
	}
}
