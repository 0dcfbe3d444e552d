// Package judged holds the judged query set that measures the quality of
// GET /recall's search: queries as people type them (misspelled, words
// joined or split, in French with or without accents, half-typed, with a
// synonym, or exact), each naming the records it should find, and the
// figures computed from a system's answers (recall@10, MRR, nDCG@10 and the
// share of empty answers, overall and by kind).
//
// A second, graded set (Graded, ReadGraded) judges queries written by hand
// against the real agency files: each relevant record graded exact or
// related, some queries with no answer at all; testdata/judged-real
// describes it.
//
// The set is data: testdata/judged/queries.tsv, described in
// testdata/judged/README.md. Generate derives it from the bundle's records
// and TestGenerate rewrites it (`go test ./internal/judged -run
// TestGenerate -args -update`); it is committed, so that figures measured on
// different days, or by different systems, judge the same queries.
package judged

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
)

// Kinds of query, in the order tables list them.
const (
	KindTypo    = "typo"    // a word misspelled: 1 edit for 5–8 letters, 2 for 9 or more
	KindJoined  = "joined"  // a name of several tokens written as one word (f150, crv, seatbelt)
	KindSplit   = "split"   // one word written as two (air bag, kid max)
	KindFrench  = "french"  // words of a French title, with accents, without, or misspelled
	KindPrefix  = "prefix"  // the last word (prefix=last) or a word* cut to 3–6 characters
	KindSynonym = "synonym" // a word replaced by its synonym or translation (mold for mould)
	KindExact   = "exact"   // the words as the record writes them: the control
)

// Kinds lists every kind, in table order.
var Kinds = []string{KindTypo, KindJoined, KindSplit, KindFrench, KindPrefix, KindSynonym, KindExact}

// MaxTargets bounds a query's relevant set: a query with more is too
// generic to judge, and recall@10 could not reach 1.
const MaxTargets = 10

// Query is one judged query.
type Query struct {
	Kind    string
	Variant string     // how the query was made from Intended (deletion, noaccent, prefix-last...)
	Q       string     // the q parameter
	Params  url.Values // other parameters of GET /recall (prefix=last, lang=fr)
	Targets []string   // the record_ids the query should find, sorted
	// Intended is the query the person meant, as the records write it:
	// Targets are the records matching it.
	Intended string
}

// Values returns the query's GET /recall parameters: q, its Params, and
// limit.
func (q Query) Values(limit int) url.Values {
	v := url.Values{}
	for k, vs := range q.Params {
		v[k] = slices.Clone(vs)
	}
	v.Set("q", q.Q)
	v.Set("limit", fmt.Sprint(limit))
	return v
}

// header is the TSV's first line.
const header = "kind\tvariant\tq\tparams\ttargets\tintended"

// Write writes qs as TSV: a header, then one line per query.
func Write(w io.Writer, qs []Query) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, header)
	for _, q := range qs {
		fmt.Fprintf(bw, "%s\t%s\t%s\t%s\t%s\t%s\n", q.Kind, q.Variant, q.Q, q.Params.Encode(),
			strings.Join(q.Targets, ","), q.Intended)
	}
	return bw.Flush()
}

// Read reads what Write writes, checking every line: six fields, a known
// kind, a non-empty q, 1 to MaxTargets targets.
func Read(r io.Reader) ([]Query, error) {
	var qs []Query
	err := readTSV(r, header, func(line int, f []string) error {
		params, err := url.ParseQuery(f[3])
		if err != nil {
			return fmt.Errorf("line %d: params: %w", line, err)
		}
		q := Query{Kind: f[0], Variant: f[1], Q: f[2], Params: params, Targets: strings.Split(f[4], ","), Intended: f[5]}
		switch {
		case !slices.Contains(Kinds, q.Kind):
			return fmt.Errorf("line %d: unknown kind %q", line, q.Kind)
		case strings.TrimSpace(q.Q) == "":
			return fmt.Errorf("line %d: empty q", line)
		case f[4] == "" || len(q.Targets) > MaxTargets:
			return fmt.Errorf("line %d: %d targets, want 1 to %d", line, len(q.Targets), MaxTargets)
		}
		qs = append(qs, q)
		return nil
	})
	return qs, err
}

// readTSV reads a set's lines: the header first, then each non-empty line
// split on tabs into as many fields as the header has, passed to add with
// its line number.
func readTSV(r io.Reader, head string, add func(line int, f []string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	want := strings.Count(head, "\t") + 1
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if line == 1 {
			if text != head {
				return fmt.Errorf("line 1 is %q, not the header %q", text, head)
			}
			continue
		}
		if text == "" {
			continue
		}
		f := strings.Split(text, "\t")
		if len(f) != want {
			return fmt.Errorf("line %d has %d fields, not %d", line, len(f), want)
		}
		if err := add(line, f); err != nil {
			return err
		}
	}
	return sc.Err()
}

// Outcome is one query's answer: the record_ids of the first page, in
// order, or Rejected when the system refused the query (an unknown
// parameter, a syntax it does not read), which scores as a miss.
type Outcome struct {
	IDs      []string
	Rejected bool
	// LeftOut are the words the search said it left out to answer
	// (GET /recall's left_out): a page for fewer words than were asked.
	LeftOut []string
}

// RecallAt returns the share of q's targets among the first k ids, out of
// min(len(Targets), k): 1 when every target is on the page, or the page is
// all targets.
func RecallAt(q Query, ids []string, k int) float64 {
	ids = ids[:min(k, len(ids))]
	found := 0
	for _, id := range ids {
		if slices.Contains(q.Targets, id) {
			found++
		}
	}
	return float64(found) / float64(min(len(q.Targets), k))
}

// ReciprocalRank returns 1/rank of the first target among the first k ids,
// or 0 when none is there.
func ReciprocalRank(q Query, ids []string, k int) float64 {
	for i, id := range ids[:min(k, len(ids))] {
		if slices.Contains(q.Targets, id) {
			return 1 / float64(i+1)
		}
	}
	return 0
}

// Score is the figures of a group of queries.
type Score struct {
	N        int     // queries
	Rejected int     // queries the system refused
	Recall   float64 // mean recall@10
	Hit      float64 // share of queries with at least one target in the top 10
	MRR      float64 // mean reciprocal rank within the top 10
	NDCG     float64 // mean nDCG@10, every target graded exact
	Zero     float64 // share of queries answered with an empty page (refusals included)
}

// K is the page depth the figures are taken at.
const K = 10

// Scores returns the figures of each kind and of all queries ("all").
func Scores(qs []Query, outs []Outcome) map[string]Score {
	sums := map[string]*Score{}
	add := func(kind string, q Query, o Outcome) {
		s := sums[kind]
		if s == nil {
			s = &Score{}
			sums[kind] = s
		}
		s.N++
		if len(o.IDs) == 0 {
			s.Zero++
		}
		if o.Rejected {
			s.Rejected++
			return
		}
		s.NDCG += NDCGAt(q.grades(), o.IDs, K)
		s.Recall += RecallAt(q, o.IDs, K)
		s.MRR += ReciprocalRank(q, o.IDs, K)
		if ReciprocalRank(q, o.IDs, K) > 0 {
			s.Hit++
		}
	}
	for i, q := range qs {
		add(q.Kind, q, outs[i])
		add("all", q, outs[i])
	}
	out := map[string]Score{}
	for k, s := range sums {
		n := float64(s.N)
		out[k] = Score{N: s.N, Rejected: s.Rejected, Recall: s.Recall / n, Hit: s.Hit / n, MRR: s.MRR / n, NDCG: s.NDCG / n, Zero: s.Zero / n}
	}
	return out
}

// Table writes a markdown table of each system's recall@10 and MRR by kind,
// systems as columns, in the order of names.
func Table(w io.Writer, names []string, scores []map[string]Score) {
	fmt.Fprint(w, "| kind | queries |")
	for _, n := range names {
		fmt.Fprintf(w, " %s recall@10 | %s MRR |", n, n)
	}
	fmt.Fprint(w, "\n|---|---:|")
	for range names {
		fmt.Fprint(w, "---:|---:|")
	}
	fmt.Fprintln(w)
	for _, kind := range append(slices.Clone(Kinds), "all") {
		if len(scores) == 0 || scores[0][kind].N == 0 {
			continue
		}
		label := kind
		if kind == "all" {
			label = "**all**"
		}
		fmt.Fprintf(w, "| %s | %d |", label, scores[0][kind].N)
		for _, s := range scores {
			fmt.Fprintf(w, " %.3f | %.3f |", s[kind].Recall, s[kind].MRR)
		}
		fmt.Fprintln(w)
	}
}

// Serve sends each query to h as GET /recall?q=…&limit=K&sort_by=relevance
// with its parameters, after prepare (which sets the API key), and returns
// the outcomes: a 422 is a refusal, any status but 200 and 422 an error.
func Serve(h http.Handler, qs []Query, prepare func(*http.Request)) ([]Outcome, error) {
	outs := make([]Outcome, len(qs))
	for i, q := range qs {
		v := q.Values(K)
		v.Set("sort_by", "relevance")
		r := httptest.NewRequest(http.MethodGet, "/recall?"+v.Encode(), nil)
		prepare(r)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		switch w.Code {
		case http.StatusOK:
			var page struct {
				Results []struct {
					RecordID string `json:"record_id"`
				} `json:"results"`
				LeftOut []string `json:"left_out"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &page); err != nil {
				return nil, fmt.Errorf("%s: %w", v.Encode(), err)
			}
			for _, res := range page.Results {
				outs[i].IDs = append(outs[i].IDs, res.RecordID)
			}
			outs[i].LeftOut = page.LeftOut
		case http.StatusUnprocessableEntity:
			outs[i].Rejected = true
		default:
			return nil, fmt.Errorf("%s: status %d: %.300s", v.Encode(), w.Code, w.Body)
		}
	}
	return outs, nil
}
