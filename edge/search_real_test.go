package edge

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel/internal/judged"
	"github.com/rappel-ca/rappel/internal/judged/realjudged"
)

// Floors of the real judged set, just under what the search measured when
// they were set (nDCG@10 0.681, recall@10 0.696, zero-result share 0.194
// of the 72 answerable queries, 12 of 14 no-answer queries empty): raise
// them as search improves.
const (
	realFloorNDCG   = 0.67
	realFloorRecall = 0.68
	realCeilZero    = 0.21
	realFloorEmpty  = 12
)

// TestSearch_JudgedReal measures GET /recall's search on real notices: the
// records Rappel's normalizers make of Health Canada's and Transport
// Canada's own files (realjudged.Notices), indexed and served through the
// router, and the hand-judged queries of testdata/judged-real, each sent
// with sort_by=relevance&limit=10. It logs nDCG@10, recall@10 and the
// share of answerable queries answered with nothing, by class and overall,
// and how many no-answer queries got an empty page, and fails when a
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
	if all.NDCG < realFloorNDCG || all.Recall < realFloorRecall || all.Zero > realCeilZero || all.Empty < realFloorEmpty {
		t.Errorf("nDCG@10 %.3f (floor %.3f), recall@10 %.3f (floor %.3f), zero-result share %.3f (ceiling %.3f), no-answer queries empty %d (floor %d)",
			all.NDCG, realFloorNDCG, all.Recall, realFloorRecall, all.Zero, realCeilZero, all.Empty, realFloorEmpty)
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
