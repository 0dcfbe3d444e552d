package edge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel/match"
	"github.com/rappel-ca/rappel/plugins/realjudged"
)

// Floors of the judged matching set (testdata/judged-match): recalled
// must be right whenever it is said, recalled and check_lot together
// must find what they should, and no item of another brand is recalled.
const (
	matchFloorRecalledPrecision = 0.98
	matchFloorFoundRecall       = 0.95
	// matchCalibrationSlack is how far a class's confidence may be from
	// the share of its candidates that were right, for a class of at
	// least matchCalibrationMin candidates.
	matchCalibrationSlack = 0.15
	matchCalibrationMin   = 5
)

// otherBrandKinds are the kinds of rows whose item is another brand's
// product: none may be recalled.
var otherBrandKinds = []string{"lookalike", "barcode_other_brand"}

// matchAnswerBody is a POST /recall/match answer, decoded.
type matchAnswerBody struct {
	AsOf   string         `json:"as_of"`
	Count  int            `json:"count"`
	Counts map[string]int `json:"counts"`
	Items  []struct {
		Index      int               `json:"index"`
		ID         json.RawMessage   `json:"id"`
		Status     json.RawMessage   `json:"status"`
		GTIN       string            `json:"gtin"`
		Message    string            `json:"message"`
		Candidates []match.Candidate `json:"candidates"`
		Detail     []map[string]any  `json:"detail"`
	} `json:"items"`
}

// status is an item's status: a string, or "422".
func (b *matchAnswerBody) status(i int) string {
	var s string
	if json.Unmarshal(b.Items[i].Status, &s) == nil {
		return s
	}
	return string(b.Items[i].Status)
}

// matchRowsBody is the request of the judged set's rows.
func matchRowsBody(rows []realjudged.MatchRow) []byte {
	var items []map[string]any
	for _, r := range rows {
		it := map[string]any{"id": r.ID}
		for k, v := range map[string]string{"gtin": r.GTIN, "brand": r.Brand, "name": r.Name, "model": r.Model, "lot": r.Lot, "best_before": r.Date} {
			if v != "" {
				it[k] = v
			}
		}
		if r.Year > 0 {
			it["year"] = r.Year
		}
		items = append(items, it)
	}
	b, _ := json.Marshal(map[string]any{"items": items})
	return b
}

// TestMatch_JudgedReal screens the judged matching set in one call: the
// records Rappel's normalizers make of the real notices and pages
// (realjudged.Products), in a real Pebble store and read index, served
// through the router. It logs, status by status, precision and recall,
// each status right only with the right notice first, and the
// confidence of each class of evidence against the share of its
// candidates that were right; it fails when recalled's precision, the
// recall of recalled and check_lot together, or a calibrated class falls
// out of bounds, or when an item of another brand is recalled.
// RAPPEL_JUDGED_MISSES=1 logs every row answered otherwise than judged.
func TestMatch_JudgedReal(t *testing.T) {
	recs := realjudged.Products(t)
	rows := realjudged.MatchSet(t)
	known := map[string]bool{}
	for _, r := range recs {
		known[r.RecordID] = true
	}
	for _, r := range rows {
		for _, id := range r.Records {
			if !known[id] {
				t.Errorf("row %s judges %s, which the real files do not give", r.ID, id)
			}
		}
	}
	if len(rows) < 80 {
		t.Errorf("the judged matching set has %d rows; it should have 80 or more", len(rows))
	}
	e := mustLookupEnv(t, recs)
	b := e.postMatch(t, matchRowsBody(rows))
	if len(b.Items) != len(rows) {
		t.Fatalf("%d answers for %d items", len(b.Items), len(rows))
	}

	type tally struct{ predicted, expected, right int }
	byStatus := map[string]*tally{}
	for _, s := range append(slices.Clone(match.Statuses), "invalid") {
		byStatus[s] = &tally{}
	}
	var found, foundOf, otherBrandRecalled int
	type calib struct{ n, right int }
	classes := map[string]*calib{}
	misses := os.Getenv("RAPPEL_JUDGED_MISSES") != ""
	for i, r := range rows {
		got := b.status(i)
		if got == "422" {
			got = "invalid"
		}
		cands := b.Items[i].Candidates
		top := ""
		if len(cands) > 0 {
			top = cands[0].RecordID
		}
		right := got == r.Expect && (r.Expect == "no_match" || r.Expect == "invalid" || slices.Contains(r.Records, top))
		byStatus[got].predicted++
		byStatus[r.Expect].expected++
		if right {
			byStatus[got].right++
		}
		if r.Expect == match.StatusRecalled || r.Expect == match.StatusCheckLot {
			foundOf++
			if slices.ContainsFunc(cands, func(c match.Candidate) bool {
				return (c.Status == match.StatusRecalled || c.Status == match.StatusCheckLot) && slices.Contains(r.Records, c.RecordID)
			}) && (got == match.StatusRecalled || got == match.StatusCheckLot) {
				found++
			}
		}
		if slices.Contains(otherBrandKinds, r.Kind) && got == match.StatusRecalled {
			otherBrandRecalled++
			t.Errorf("row %s (%s), another brand's product, is recalled: %+v", r.ID, r.Note, cands)
		}
		for _, c := range cands {
			if c.Status == match.StatusNoMatch {
				continue // not covered: its confidence is 0 by rule
			}
			cl := classes[c.Evidence]
			if cl == nil {
				cl = &calib{}
				classes[c.Evidence] = cl
			}
			cl.n++
			if slices.Contains(r.Records, c.RecordID) {
				cl.right++
			}
		}
		if misses && !right {
			var got []string
			for _, c := range cands {
				got = append(got, fmt.Sprintf("%s %s %s %.2f", c.RecordID, c.Status, c.Evidence, c.Confidence))
			}
			t.Logf("miss %s (%s): %s, judged %s %v: %s", r.ID, r.Kind, b.status(i), r.Expect, r.Records, strings.Join(got, "; "))
		}
	}

	var table strings.Builder
	fmt.Fprintf(&table, "%-10s %9s %9s %6s %9s %6s\n", "status", "predicted", "expected", "right", "precision", "recall")
	ratio := func(a, b int) float64 {
		if b == 0 {
			return math.NaN()
		}
		return float64(a) / float64(b)
	}
	for _, s := range append(slices.Clone(match.Statuses), "invalid") {
		c := byStatus[s]
		fmt.Fprintf(&table, "%-10s %9d %9d %6d %9.3f %6.3f\n", s, c.predicted, c.expected, c.right, ratio(c.right, c.predicted), ratio(c.right, c.expected))
	}
	fmt.Fprintf(&table, "recalled+check_lot found: %d of %d (%.3f); another brand's product recalled: %d\n", found, foundOf, ratio(found, foundOf), otherBrandRecalled)
	fmt.Fprintf(&table, "%-24s %5s %6s %8s %10s\n", "evidence", "cands", "right", "share", "confidence")
	for _, k := range sortedKeys(classes) {
		cl := classes[k]
		share := float64(cl.right+1) / float64(cl.n+2)
		fmt.Fprintf(&table, "%-24s %5d %6d %8.2f %10.2f\n", k, cl.n, cl.right, share, match.Confidence(k))
		if cl.n >= matchCalibrationMin && math.Abs(share-match.Confidence(k)) > matchCalibrationSlack {
			t.Errorf("evidence %s: confidence %.2f, but %d of its %d candidates were right (smoothed share %.2f): recalibrate it in match/confidence.go",
				k, match.Confidence(k), cl.right, cl.n, share)
		}
	}
	t.Logf("judged matching set, %d rows, as of %s:\n%s", len(rows), b.AsOf, table.String())

	if p := ratio(byStatus[match.StatusRecalled].right, byStatus[match.StatusRecalled].predicted); !(p >= matchFloorRecalledPrecision) {
		t.Errorf("recalled precision %.3f, floor %.2f", p, matchFloorRecalledPrecision)
	}
	if rc := ratio(found, foundOf); rc < matchFloorFoundRecall {
		t.Errorf("recall of recalled and check_lot together %.3f, floor %.2f", rc, matchFloorFoundRecall)
	}
	if byStatus["invalid"].right != byStatus["invalid"].expected {
		t.Errorf("%d of %d invalid items refused", byStatus["invalid"].right, byStatus["invalid"].expected)
	}
}

// postMatch posts body to POST /recall/match through the router and
// decodes the 200 answer, failing otherwise.
func (e *lookupEnv) postMatch(tb testing.TB, body []byte) *matchAnswerBody {
	tb.Helper()
	code, b := e.match(tb, body)
	if code != http.StatusOK {
		tb.Fatalf("POST /recall/match: %d %.500s", code, b)
	}
	var a matchAnswerBody
	if err := json.Unmarshal(b, &a); err != nil {
		tb.Fatalf("POST /recall/match: %v: %.300s", err, b)
	}
	return &a
}

// match posts body to POST /recall/match with the test key and returns
// the status and body.
func (e *lookupEnv) match(tb testing.TB, body []byte) (int, []byte) {
	tb.Helper()
	r := httptest.NewRequest(http.MethodPost, "/recall/match", bytes.NewReader(body))
	r.Header.Set("X-Gateway-Key", testKey)
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, r)
	return w.Code, w.Body.Bytes()
}

// sortedKeys returns m's keys, sorted.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
