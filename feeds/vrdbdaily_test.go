package feeds_test

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/feeds"
	"github.com/rappel-ca/rappel/feeds/feedstest"
	"github.com/rappel-ca/rappel/plugins/guest/guesttest"
)

// tcRows cuts a Transport Canada CSV into its header and each recall's
// rows, as written (line breaks inside comments and all).
type tcRows struct {
	header []byte
	order  []string
	rows   map[string][][]byte
}

func readTCRows(t *testing.T, data []byte) *tcRows {
	t.Helper()
	cr := csv.NewReader(bytes.NewReader(data))
	header, err := cr.Read()
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(header, "RECALL_NUMBER_NUM")
	out := &tcRows{header: data[:cr.InputOffset()], rows: map[string][][]byte{}}
	for {
		start := cr.InputOffset()
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		n := rec[col]
		if _, ok := out.rows[n]; !ok {
			out.order = append(out.order, n)
		}
		out.rows[n] = append(out.rows[n], data[start:cr.InputOffset()])
	}
}

// file writes the recalls back, without those in drop, then those of add
// (recall numbers of from) at the end.
func (r *tcRows) file(drop []string, from *tcRows, add ...string) []byte {
	b := bytes.Clone(r.header)
	for _, n := range r.order {
		if !slices.Contains(drop, n) {
			b = append(b, bytes.Join(r.rows[n], nil)...)
		}
	}
	for _, n := range add {
		b = append(b, bytes.Join(from.rows[n], nil)...)
	}
	return b
}

// TestRefresh_VRDBDaily serves Transport Canada's vehicle file as its
// monthly full file (the agency's download of 2023-01-13 stands in for it:
// the same columns) and its 60-day extract (the download of 2023-01-17,
// CRLF, whose 11 recalls are not in the other), through the shipped vrdb
// plugin in wazero, and follows them over refreshes:
//   - after one refresh, every recall of the extract is served from its
//     rows (the new ones, and 2022636 whose units changed), and those only
//     the full file has from the full file's;
//   - the full file is not fetched again within its interval, the extract
//     at every refresh;
//   - a recall that drops out of the extract is kept;
//   - with the extract down, the full file still serves, a problem says
//     so, and a new full file then removes nothing;
//   - with the extract back, the new full file is applied with it: a
//     recall neither has leaves.
func TestRefresh_VRDBDaily(t *testing.T) {
	fullData := guesttest.RealSample(t, "tc-vrdb-daily-2023-01-13-whole.csv")
	dailyData := guesttest.RealSample(t, "tc-vrdb-daily-2023-01-17-crlf.csv")
	full, daily := readTCRows(t, fullData), readTCRows(t, dailyData)
	wantFull, wantDaily := readTCRecalls(t, fullData), readTCRecalls(t, dailyData)
	const fullPath, dailyPath = "/tc/vrdb_full_monthly.csv", "/tc/vrdb_60days_daily.csv"
	const added, changed, onlyFull = "2023005", "2022636", "2018024"
	if _, ok := wantFull[added]; ok || wantDaily[added] == nil || wantFull[changed].units == wantDaily[changed].units || wantDaily[onlyFull] != nil {
		t.Fatal("the real files are not the ones this test reads")
	}
	up := feedstest.NewUpstream(t)
	up.Set(fullPath, fullData)
	up.Set(dailyPath, dailyData)
	stack := refreshReal(t, map[string]string{"vrdb": vrdbPkg}, feeds.VRDBDaily(up.URL+fullPath, up.URL+dailyPath, 24*time.Hour))
	now := time.Now()
	stack.r.Now = func() time.Time { return now }
	f := feeds.NewFetcher()
	f.Retries, f.Logger = 0, slog.New(slog.DiscardHandler)
	stack.r.Fetcher = f
	refresh := func() {
		t.Helper()
		if err := stack.r.Refresh(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	record := func(number string) (*rappel.Record, bool) {
		t.Helper()
		var rec rappel.Record
		code := stack.try("/recall/tc-"+number, &rec)
		return &rec, code == http.StatusOK && rec.Status != rappel.StatusArchived
	}
	check := func(step string, records int, problem string) {
		t.Helper()
		st := stack.r.States()[0]
		if st.LastError != "" || st.Records != records {
			t.Fatalf("%s: state %+v; want %d records and no error", step, st, records)
		}
		switch {
		case problem == "" && len(st.Problems) != 0:
			t.Fatalf("%s: problems %+v", step, st.Problems)
		case problem != "" && (len(st.Problems) == 0 || !strings.Contains(st.Problems[0].Reason, problem)):
			t.Fatalf("%s: problems %+v; want one saying %q", step, st.Problems, problem)
		}
	}
	hits := func(step string, full, daily int) {
		t.Helper()
		if f, d := up.Hits(fullPath), up.Hits(dailyPath); f != full || d != daily {
			t.Fatalf("%s: the full file was asked for %d times, the extract %d; want %d and %d", step, f, d, full, daily)
		}
	}

	// One refresh: the extract's recalls are served from its rows.
	check("first refresh", len(wantFull)+11, "")
	hits("first refresh", 1, 1)
	for n, w := range wantDaily {
		rec, ok := record(n)
		if !ok {
			t.Fatalf("tc-%s of the extract is not served", n)
		}
		checkTCRecord(t, rec, w)
	}
	for n, w := range wantFull {
		if wantDaily[n] == nil {
			rec, ok := record(n)
			if !ok {
				t.Fatalf("tc-%s of the full file alone is not served", n)
			}
			checkTCRecord(t, rec, w)
		}
	}
	if rec, _ := record(changed); rec.UnitsAffected == nil || *rec.UnitsAffected != 3200 {
		t.Errorf("tc-%s: units %v; the extract, newer, says 3,200", changed, rec.UnitsAffected)
	}

	// The extract moves on and the new recall drops out of its window:
	// it stays, and the full file is not fetched again.
	up.Set(dailyPath, daily.file([]string{added}, nil))
	now = now.Add(time.Hour)
	refresh()
	check("the new recall out of the window", len(wantFull)+11, "")
	hits("the new recall out of the window", 1, 2)
	if rec, ok := record(added); !ok {
		t.Fatalf("tc-%s left with the 60-day window: %+v", added, rec)
	} else {
		checkTCRecord(t, rec, wantDaily[added])
	}

	// The extract is down: the records stay, a problem says why.
	up.Fail(dailyPath, feedstest.Fault{Status: http.StatusServiceUnavailable})
	now = now.Add(time.Hour)
	refresh()
	check("the extract down", len(wantFull)+11, "vrdb-daily.csv")
	hits("the extract down", 1, 3)

	// A new full file while the extract is down (with the new recall, and
	// without one of its own): fetched, and nothing leaves.
	up.Set(fullPath, full.file([]string{onlyFull}, daily, added))
	now = now.Add(25 * time.Hour)
	refresh()
	check("a new full file, the extract down", len(wantFull)+11, "vrdb-daily.csv")
	hits("a new full file, the extract down", 2, 4)
	if _, ok := record(onlyFull); !ok {
		t.Fatalf("tc-%s left on a full file read without its extract", onlyFull)
	}

	// The extract is back: the full file is fetched again and applied
	// with it (the extract, not modified since, asked for again whole);
	// the recall neither has leaves.
	up.Heal()
	now = now.Add(25 * time.Hour)
	refresh()
	check("the extract back", len(wantFull)+10, "")
	hits("the extract back", 3, 6)
	if rec, ok := record(onlyFull); ok {
		t.Fatalf("tc-%s is in neither file and is still served: %+v", onlyFull, rec.Status)
	}
	if _, ok := record(added); !ok {
		t.Fatalf("tc-%s, in the new full file, is not served", added)
	}
}
