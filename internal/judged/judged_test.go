package judged

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/bundle"
)

var update = flag.Bool("update", false, "rewrite testdata/judged/queries.tsv from the bundle's records")

// setPath is the committed judged set, from this package's directory.
const setPath = "../../testdata/judged/queries.tsv"

func bundleRecords(t *testing.T) []*rappel.Record {
	t.Helper()
	var recs []*rappel.Record
	err := bundle.ReadRecords(bundle.Embedded(), func(r *rappel.Record) error {
		recs = append(recs, r)
		return nil
	})
	if errors.Is(err, bundle.ErrEmpty) && os.Getenv("RAPPEL_TEST_BUNDLE") == "" {
		t.Skip("no data bundle is embedded; run `make bundle`")
	}
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func readSet(t *testing.T) []Query {
	t.Helper()
	f, err := os.Open(setPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	qs, err := Read(f)
	if err != nil {
		t.Fatal(err)
	}
	return qs
}

// TestGenerate checks that the committed set is what Generate derives
// from the bundle's records, and rewrites it with -update.
func TestGenerate(t *testing.T) {
	qs := Generate(bundleRecords(t))
	var b bytes.Buffer
	if err := Write(&b, qs); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(setPath, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old, err := os.ReadFile(setPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(old, b.Bytes()) {
		t.Errorf("%s is not what the generator writes from the bundle; rewrite it with `go test ./internal/judged -run TestGenerate -update` and review the diff", setPath)
	}
}

// TestSet checks the committed set: its mix of kinds, unique queries, and,
// against the bundle's records, that each query's targets are exactly the
// records its intended words name.
func TestSet(t *testing.T) {
	qs := readSet(t)
	minimum := map[string]int{KindTypo: 100, KindFrench: 50, KindPrefix: 50, KindSynonym: 20, KindExact: 30}
	count := map[string]int{}
	seen := map[string]bool{}
	for _, q := range qs {
		count[q.Kind]++
		key := q.Q + "?" + q.Params.Encode()
		if seen[key] {
			t.Errorf("%q is in the set twice", key)
		}
		seen[key] = true
		if q.Kind == KindExact && q.Q != q.Intended {
			t.Errorf("exact query %q differs from its intended words %q", q.Q, q.Intended)
		}
	}
	for k, n := range minimum {
		if count[k] < n {
			t.Errorf("%d %s queries, want at least %d", count[k], k, n)
		}
	}
	if count[KindJoined]+count[KindSplit] < 40 {
		t.Errorf("%d joined and split queries, want at least 40", count[KindJoined]+count[KindSplit])
	}
	if len(qs) < 300 {
		t.Errorf("%d queries, want at least 300", len(qs))
	}
	c := newCorpus(bundleRecords(t))
	for _, q := range qs {
		if got := c.targets(c.docs(q.Intended, false, false)); !slices.Equal(got, q.Targets) {
			t.Errorf("%s %q: intended %q names %v, the set says %v", q.Kind, q.Q, q.Intended, got, q.Targets)
		}
	}
}

func TestMetrics(t *testing.T) {
	q := Query{Targets: []string{"a", "b"}}
	for _, c := range []struct {
		ids    []string
		recall float64
		rr     float64
	}{
		{[]string{"x", "a", "b"}, 1, 0.5},
		{[]string{"b"}, 0.5, 1},
		{[]string{"x", "y"}, 0, 0},
		{nil, 0, 0},
	} {
		if r := RecallAt(q, c.ids, K); r != c.recall {
			t.Errorf("%v: recall %v, want %v", c.ids, r, c.recall)
		}
		if r := ReciprocalRank(q, c.ids, K); r != c.rr {
			t.Errorf("%v: reciprocal rank %v, want %v", c.ids, r, c.rr)
		}
	}
	many := Query{Targets: strings.Split("a,b,c,d,e,f,g,h,i,j", ",")}
	if r := RecallAt(many, many.Targets[:5], 3); r != 1 {
		t.Errorf("3 targets of 3 at k=3: recall %v, want 1", r)
	}
	s := Scores([]Query{q, q}, []Outcome{{IDs: []string{"a"}}, {Rejected: true}})
	if s["all"].N != 2 || s["all"].Rejected != 1 || s["all"].Recall != 0.25 || s["all"].MRR != 0.5 {
		t.Errorf("scores %+v", s["all"])
	}
	var b bytes.Buffer
	if err := Write(&b, []Query{{Kind: KindExact, Q: "x y", Targets: []string{"a"}, Intended: "x y"}}); err != nil {
		t.Fatal(err)
	}
	if back, err := Read(&b); err != nil || len(back) != 1 || back[0].Q != "x y" {
		t.Errorf("read back %v, %v", back, err)
	}
}
