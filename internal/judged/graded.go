package judged

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Grades of a graded judgment: what the query means exactly, or a record
// related to it (the same make but another model, the same pathogen in
// another food). Records not judged are irrelevant (0).
const (
	GradeRelated = 1
	GradeExact   = 2
)

// Graded is one query of a graded judged set (testdata/judged-real): a
// query as people type it, with the records relevant to it and how
// relevant each is. A query with no judgments is a no-answer query: the
// right answer is an empty page.
type Graded struct {
	Class  string         // what the query is about (food, vehicle, french, none...)
	Q      string         // the q parameter
	Params url.Values     // other parameters of GET /recall, may be empty
	Grades map[string]int // record_id -> GradeRelated or GradeExact
	Note   string
}

// Values returns the query's GET /recall parameters: q, its Params, and
// limit.
func (g Graded) Values(limit int) url.Values {
	return Query{Q: g.Q, Params: g.Params}.Values(limit)
}

// gradedHeader is a graded set's first line.
const gradedHeader = "class\tq\tparams\tjudgments\tnote"

// ReadGraded reads a graded set: a header, then one query a line, five
// tab-separated fields, the judgments written id:grade and comma-separated
// (empty for a no-answer query). It checks every line: a class, a
// non-empty q, grades 1 or 2, no record judged twice, no query twice.
func ReadGraded(r io.Reader) ([]Graded, error) {
	var qs []Graded
	seen := map[string]bool{}
	err := readTSV(r, gradedHeader, func(line int, f []string) error {
		params, err := url.ParseQuery(f[2])
		if err != nil {
			return fmt.Errorf("line %d: params: %w", line, err)
		}
		g := Graded{Class: f[0], Q: f[1], Params: params, Grades: map[string]int{}, Note: f[4]}
		switch key := g.Q + "?" + params.Encode(); {
		case g.Class == "":
			return fmt.Errorf("line %d: empty class", line)
		case strings.TrimSpace(g.Q) == "":
			return fmt.Errorf("line %d: empty q", line)
		case seen[key]:
			return fmt.Errorf("line %d: the query %q is already in the set", line, g.Q)
		default:
			seen[key] = true
		}
		if f[3] != "" {
			for _, j := range strings.Split(f[3], ",") {
				id, grade, ok := strings.Cut(j, ":")
				n, err := strconv.Atoi(grade)
				switch {
				case !ok || id == "" || err != nil || (n != GradeRelated && n != GradeExact):
					return fmt.Errorf("line %d: judgment %q is not record_id:1 or record_id:2", line, j)
				case g.Grades[id] != 0:
					return fmt.Errorf("line %d: %s is judged twice", line, id)
				}
				g.Grades[id] = n
			}
		}
		qs = append(qs, g)
		return nil
	})
	return qs, err
}

// NDCGAt returns the normalized discounted cumulative gain of ids' first k
// against grades: each record scores 2^grade-1 discounted by log2(rank+1),
// divided by the score of the best possible page. A query with no
// judgments scores 1 for an empty page and 0 otherwise.
func NDCGAt(grades map[string]int, ids []string, k int) float64 {
	ids = ids[:min(k, len(ids))]
	if len(grades) == 0 {
		if len(ids) == 0 {
			return 1
		}
		return 0
	}
	gain := func(g int) float64 { return math.Exp2(float64(g)) - 1 }
	dcg := 0.0
	for i, id := range ids {
		dcg += gain(grades[id]) / math.Log2(float64(i+2))
	}
	ideal := make([]int, 0, len(grades))
	for _, g := range grades {
		ideal = append(ideal, g)
	}
	slices.Sort(ideal)
	slices.Reverse(ideal)
	idcg := 0.0
	for i, g := range ideal[:min(k, len(ideal))] {
		idcg += gain(g) / math.Log2(float64(i+2))
	}
	return dcg / idcg
}

// GradedRecallAt returns the share of the query's best records among ids'
// first k, out of min(their number, k): the records graded exact, or the
// related ones when none is. A no-answer query has no recall (NaN).
func GradedRecallAt(grades map[string]int, ids []string, k int) float64 {
	top := 0
	for _, g := range grades {
		top = max(top, g)
	}
	want := 0
	for _, g := range grades {
		if g == top {
			want++
		}
	}
	if want == 0 {
		return math.NaN()
	}
	found := 0
	for _, id := range ids[:min(k, len(ids))] {
		if g, ok := grades[id]; ok && g == top {
			found++
		}
	}
	return float64(found) / float64(min(want, k))
}

// GradedScore is the figures of a group of graded queries.
type GradedScore struct {
	N          int     // queries
	Answerable int     // queries with judgments
	Rejected   int     // queries the system refused
	NDCG       float64 // mean nDCG@10 of the answerable queries
	Recall     float64 // mean recall@10 of the answerable queries (GradedRecallAt)
	Zero       float64 // share of the answerable queries answered with an empty page
	NoAnswer   int     // no-answer queries
	Empty      int     // no-answer queries answered with an empty page
	// Told is the no-answer queries answered with an empty page or with
	// a page that says which words it left out: a client can show "no
	// results for xbox controller; results for controller".
	Told int
}

// GradedScores returns the figures of each class and of all queries
// ("all"). A refused query scores as an empty page.
func GradedScores(qs []Graded, outs []Outcome) map[string]GradedScore {
	sums := map[string]*GradedScore{}
	add := func(class string, q Graded, o Outcome) {
		s := sums[class]
		if s == nil {
			s = &GradedScore{}
			sums[class] = s
		}
		s.N++
		if o.Rejected {
			s.Rejected++
		}
		if len(q.Grades) == 0 {
			s.NoAnswer++
			if len(o.IDs) == 0 {
				s.Empty++
			}
			if len(o.IDs) == 0 || len(o.LeftOut) > 0 {
				s.Told++
			}
			return
		}
		s.Answerable++
		s.NDCG += NDCGAt(q.Grades, o.IDs, K)
		s.Recall += GradedRecallAt(q.Grades, o.IDs, K)
		if len(o.IDs) == 0 {
			s.Zero++
		}
	}
	for i, q := range qs {
		add(q.Class, q, outs[i])
		add("all", q, outs[i])
	}
	out := map[string]GradedScore{}
	for k, s := range sums {
		if n := float64(s.Answerable); n > 0 {
			s.NDCG, s.Recall, s.Zero = s.NDCG/n, s.Recall/n, s.Zero/n
		}
		out[k] = *s
	}
	return out
}

// Classes returns the classes of qs in the order they first appear.
func Classes(qs []Graded) []string {
	var out []string
	for _, q := range qs {
		if !slices.Contains(out, q.Class) {
			out = append(out, q.Class)
		}
	}
	return out
}

// GradedTable writes a markdown table of each system's nDCG@10, recall@10
// and zero-result share by class (then all queries), systems as columns
// in the order of names, and, for the no-answer queries, how many each
// answered with an empty page.
func GradedTable(w io.Writer, classes, names []string, scores []map[string]GradedScore) {
	fmt.Fprint(w, "| class | queries |")
	for _, n := range names {
		fmt.Fprintf(w, " %s nDCG@10 | %s recall@10 | %s zero-result |", n, n, n)
	}
	fmt.Fprint(w, "\n|---|---:|")
	for range names {
		fmt.Fprint(w, "---:|---:|---:|")
	}
	fmt.Fprintln(w)
	for _, class := range append(slices.Clone(classes), "all") {
		if len(scores) == 0 {
			return
		}
		first := scores[0][class]
		label := class
		if class == "all" {
			label = "**all answerable**"
		}
		if first.Answerable > 0 {
			fmt.Fprintf(w, "| %s | %d |", label, first.Answerable)
			for _, s := range scores {
				fmt.Fprintf(w, " %.3f | %.3f | %.3f |", s[class].NDCG, s[class].Recall, s[class].Zero)
			}
			fmt.Fprintln(w)
		}
		if class == "all" && first.NoAnswer > 0 {
			fmt.Fprintf(w, "| no-answer queries answered empty | %d |", first.NoAnswer)
			for _, s := range scores {
				fmt.Fprintf(w, " %d of %d | | |", s[class].Empty, s[class].NoAnswer)
			}
			fmt.Fprintln(w)
			fmt.Fprintf(w, "| no-answer queries empty, or words left out said | %d |", first.NoAnswer)
			for _, s := range scores {
				fmt.Fprintf(w, " %d of %d | | |", s[class].Told, s[class].NoAnswer)
			}
			fmt.Fprintln(w)
		}
	}
}

// ServeGraded is Serve for a graded set.
func ServeGraded(h http.Handler, qs []Graded, prepare func(*http.Request)) ([]Outcome, error) {
	plain := make([]Query, len(qs))
	for i, g := range qs {
		plain[i] = Query{Q: g.Q, Params: g.Params}
	}
	return Serve(h, plain, prepare)
}

// grades returns q's targets as a graded judgment, each exact.
func (q Query) grades() map[string]int {
	g := make(map[string]int, len(q.Targets))
	for _, id := range q.Targets {
		g[id] = GradeExact
	}
	return g
}
