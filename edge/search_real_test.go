package edge

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel/internal/judged"
	"github.com/rappel-ca/rappel/plugins/realjudged"
)

// Floors of the real judged set, at the goal (nDCG@10 0.90) and just under
// what the search measured when they were set (nDCG@10 0.913, recall@10
// 0.913, zero-result share 0 of the 72 answerable queries; 12 of 14
// no-answer queries answered empty or with the words that found nothing
// named in left_out, 7 of them empty): raise them as search improves.
const (
	realFloorNDCG   = 0.90
	realFloorRecall = 0.90
	realCeilZero    = 1.0 / 30
	realFloorTold   = 12
)

// TestSearch_JudgedReal measures GET /recall's search on real notices: the
// records Rappel's normalizers make of Health Canada's and Transport
// Canada's own files (realjudged.Notices), indexed and served through the
// router, and the hand-judged queries of testdata/judged-real, each sent
// with sort_by=relevance&limit=10. It logs nDCG@10, recall@10 and the
// share of answerable queries answered with nothing, by class and overall,
// and how many no-answer queries got an empty page or one naming the
// words it left out, and fails when a
// figure falls below its floor. RAPPEL_JUDGED_MISSES=1 logs every query
// that misses, with what it returned.
func TestSearch_JudgedReal(t *testing.T) {
	recs := realjudged.Notices(t)
	qs := realjudged.Set(t)
	byID := map[string]string{}
	for _, r := range recs {
		byID[r.RecordID] = r.Title("en")
	}
	for _, q := range qs {
		for id := range q.Grades {
			if _, ok := byID[id]; !ok {
				t.Errorf("query %q judges %s, which the real files do not give", q.Q, id)
			}
		}
	}
	s, _ := MustServer(t, MustCatalog(t, recs))
	s.Logger = discardLogger()
	outs, err := judged.ServeGraded(s.Handler(), qs, func(r *http.Request) { r.Header.Set("X-Gateway-Key", testKey) })
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("RAPPEL_JUDGED_MISSES") != "" {
		logMisses(t, qs, outs, byID)
	}
	scores := judged.GradedScores(qs, outs)
	var b bytes.Buffer
	judged.GradedTable(&b, judged.Classes(qs), []string{"rappel"}, []map[string]judged.GradedScore{scores})
	all := scores["all"]
	t.Logf("real judged set, %d queries (%d answerable), %d refused (422):\n%s", all.N, all.Answerable, all.Rejected, strings.TrimSpace(b.String()))
	if all.NDCG < realFloorNDCG || all.Recall < realFloorRecall || all.Zero > realCeilZero || all.Told < realFloorTold {
		t.Errorf("nDCG@10 %.3f (floor %.3f), recall@10 %.3f (floor %.3f), zero-result share %.3f (ceiling %.3f), no-answer queries empty or told %d (floor %d)",
			all.NDCG, realFloorNDCG, all.Recall, realFloorRecall, all.Zero, realCeilZero, all.Told, realFloorTold)
	}
}

// logMisses logs the queries below a perfect nDCG@10, worst first, with
// the first records they returned and the grade of each.
func logMisses(t *testing.T, qs []judged.Graded, outs []judged.Outcome, titles map[string]string) {
	t.Helper()
	order := make([]int, len(qs))
	for i := range order {
		order[i] = i
	}
	ndcg := func(i int) float64 { return judged.NDCGAt(qs[i].Grades, outs[i].IDs, judged.K) }
	slices.SortStableFunc(order, func(a, b int) int {
		return strings.Compare(fmt.Sprintf("%.6f", ndcg(a)), fmt.Sprintf("%.6f", ndcg(b)))
	})
	for _, i := range order {
		if ndcg(i) == 1 {
			continue
		}
		var got []string
		for _, id := range outs[i].IDs[:min(5, len(outs[i].IDs))] {
			got = append(got, fmt.Sprintf("%s(%d) %.50q", id, qs[i].Grades[id], titles[id]))
		}
		t.Logf("miss %s %q: nDCG@10 %.2f, %d judged, %d returned, refused %v: %s", qs[i].Class, qs[i].Q, ndcg(i), len(qs[i].Grades), len(outs[i].IDs), outs[i].Rejected, strings.Join(got, "; "))
	}
}

// TestSearch_RealFindings checks, on the real notices through the router,
// what people type that used to find nothing or the wrong thing: a word
// no notice has beside one they have ("milk allergy", "xbox
// controller": the word that finds nothing is left out and named, unless
// relax=off or the words are a phrase), a search by relevance that finds
// too little with every word ("bread metal": its words made optional,
// what had them all first), vocabulary ("chevy bolt", "hand
// sanitizer"), an acronym that is not stemmed into "a" ("aed"), French
// plurals ("pneus" finds what "pneu" does), a word of the vocabulary
// that is never corrected into another ("arachides"), and words that
// leave nothing worth searching for ("iphone 15": not "15" alone).
func TestSearch_RealFindings(t *testing.T) {
	recs := realjudged.Notices(t)
	s, _ := MustServer(t, MustCatalog(t, recs))
	s.Logger = discardLogger()
	h := s.Handler()
	title := map[string]string{}
	for _, r := range recs {
		title[r.RecordID] = strings.ToLower(r.Title("en"))
	}
	rel := "sort_by=relevance"

	if p := forgive(t, h, "milk allergy", rel); p.Count < 10 || len(p.LeftOut) != 0 {
		t.Errorf("milk allergy: %d records, left out %q; want the milk allergen notices, all words kept", p.Count, p.LeftOut)
	}
	if p := forgive(t, h, "hand sanitizer", rel); p.Count == 0 || !strings.Contains(title[p.Results[0].RecordID], "sanitiz") {
		t.Errorf("hand sanitizer: %+v", p)
	}
	if p := forgive(t, h, "chevy bolt", rel); p.Count == 0 || !strings.Contains(title[p.Results[0].RecordID], "chevrolet bolt") || len(p.Corrections) != 0 {
		t.Errorf("chevy bolt: %+v", p)
	}
	if p := forgive(t, h, "aed", "typos=off"); p.Count == 0 || p.Count > 10 {
		t.Errorf("aed finds %d records; an acronym must not match every 'a'", p.Count)
	}
	if one, many := forgive(t, h, "pneu"), forgive(t, h, "pneus"); many.Count != one.Count || one.Count == 0 {
		t.Errorf("pneus finds %d, pneu %d", many.Count, one.Count)
	}
	// A brand for its drug, a British spelling, a pill for a tablet.
	for q, want := range map[string]string{"childrens tylenol": "acetaminophen", "hand sanitiser": "sanitiz", "tylenol": "acetaminophen"} {
		if p := forgive(t, h, q, rel); p.Count == 0 || !strings.Contains(title[p.Results[0].RecordID], want) {
			t.Errorf("%s: the first of %d records is not about %s", q, p.Count, want)
		}
	}
	// What the notice says to do is searched: the Seasonique and Seasonale
	// notices say "birth control" there, or "pills", where their titles
	// say neither.
	pills := forgive(t, h, "birth control pills", rel)
	found := 0
	for _, r := range pills.Results {
		if slices.Contains([]string{"hc-77379", "hc-77384", "hc-77550", "hc-77566", "hc-77568"}, r.RecordID) {
			found++
		}
	}
	if found < 4 {
		t.Errorf("birth control pills: %d of the 5 birth control notices on the first page", found)
	}
	// The word that keeps the others apart is not the most common one:
	// "blood pressure medication" leaves out "medication", not "pressure".
	if p := forgive(t, h, "blood pressure medication", rel); p.Count == 0 || !slices.Equal(p.LeftOut, []string{"medication"}) ||
		!strings.Contains(title[p.Results[0].RecordID], "blood pressure") {
		t.Errorf("blood pressure medication: %d records, left out %q", p.Count, p.LeftOut)
	}
	if p := forgive(t, h, "arachides", rel); p.Count == 0 || len(p.Corrections) != 0 {
		t.Errorf("arachides: %d records, corrections %+v; a word of the vocabulary is not corrected", p.Count, p.Corrections)
	}

	// Too little with every word: by relevance, the words become optional,
	// what had them all first; by date, or with relax=off, not.
	strict := forgive(t, h, "bread metal", "relax=off")
	soft := forgive(t, h, "bread metal", rel)
	if strict.Count == 0 || strict.Count >= 3 || soft.Count <= strict.Count || !slices.Equal(soft.Optional, []string{"bread", "metal"}) ||
		soft.Results[0].RecordID != strict.Results[0].RecordID {
		t.Errorf("bread metal: strict %+v, softened %+v", strict, soft)
	}
	// Its pages, cursor after cursor, are the one ranking: each record
	// once, as many as count says.
	seen := map[string]bool{}
	for path := "/recall?limit=2&sort_by=relevance&q=bread+metal"; path != ""; {
		var page struct {
			Count   int      `json:"count"`
			Next    *string  `json:"next_cursor"`
			Opt     []string `json:"optional"`
			Results []struct {
				RecordID string `json:"record_id"`
			} `json:"results"`
		}
		if code, body := getJSON(t, h, path, &page); code != 200 || page.Count != soft.Count || len(page.Opt) != 2 {
			t.Fatalf("%s: %d %.300s", path, code, body)
		}
		for _, r := range page.Results {
			if seen[r.RecordID] {
				t.Fatalf("%s comes twice in the softened pages", r.RecordID)
			}
			seen[r.RecordID] = true
		}
		path = ""
		if page.Next != nil {
			path = "/recall?limit=2&sort_by=relevance&q=bread+metal&cursor=" + url.QueryEscape(*page.Next)
		}
	}
	if len(seen) != soft.Count || soft.Count < 5 {
		t.Errorf("the softened pages hold %d records, count says %d", len(seen), soft.Count)
	}
	if byDate := forgive(t, h, "bread metal"); byDate.Count != strict.Count || len(byDate.Optional) != 0 {
		t.Errorf("bread metal by date: %+v, want the strict %d records", byDate, strict.Count)
	}

	// "car seat" means a child's car seat: the first page is those recalls
	// (the pair is a phrase of the vocabulary, siège d'auto), not the seat
	// belts of cars.
	seats := forgive(t, h, "car seat", rel)
	for i, r := range seats.Results[:min(8, len(seats.Results))] {
		if !childSeats[r.RecordID] {
			t.Errorf("car seat: result %d is %s %q, not a child car seat recall", i+1, r.RecordID, title[r.RecordID])
		}
	}

	p := forgive(t, h, "xbox controller", rel)
	if p.Count == 0 || !slices.Equal(p.LeftOut, []string{"xbox"}) {
		t.Errorf("xbox controller: %d records, left out %q; want what 'controller' finds, with xbox left out", p.Count, p.LeftOut)
	}
	if alone := forgive(t, h, "controller", rel); alone.Count != p.Count {
		t.Errorf("the relaxed count %d is not what 'controller' finds, %d", p.Count, alone.Count)
	}
	for _, c := range []struct{ q, extra string }{
		{"xbox controller", "relax=off"},
		{`"xbox controller"`, rel},
		{"xbox OR iphone controller", rel},
		{"iphone 15", rel},
		{"hepatitis a", rel}, // not "hepat" corrected into "heat", then "a"
		{"xyzzy qwertyuiop", rel},
	} {
		if p := forgive(t, h, c.q, c.extra); p.Count != 0 || len(p.LeftOut) != 0 {
			t.Errorf("%s (%s): %d records, left out %q; want nothing", c.q, c.extra, p.Count, p.LeftOut)
		}
	}
}

// childSeats are the child car seat recalls of the real Transport Canada
// file, as testdata/judged-real judges "car seat".
var childSeats = map[string]bool{
	"tc-2022723": true, "tc-2022745": true, "tc-2022748": true, "tc-2024718": true, "tc-2024736": true,
	"tc-2024764": true, "tc-2024768": true, "tc-2024773": true, "tc-2024774": true, "tc-2025055": true,
	"tc-2025236": true, "tc-2025237": true, "tc-2025239": true, "tc-2026354": true,
}
