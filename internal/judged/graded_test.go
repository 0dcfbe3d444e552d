package judged

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestNDCGAt checks the graded gain against figures worked by hand.
func TestNDCGAt(t *testing.T) {
	grades := map[string]int{"a": 2, "b": 1}
	best := 3 + 1/math.Log2(3) // a first, b second
	cases := []struct {
		ids  []string
		want float64
	}{
		{[]string{"a", "b"}, 1},
		{[]string{"b", "a"}, (1 + 3/math.Log2(3)) / best},
		{[]string{"x", "a"}, (3 / math.Log2(3)) / best},
		{[]string{"x", "y"}, 0},
		{nil, 0},
	}
	for _, c := range cases {
		if got := NDCGAt(grades, c.ids, K); !near(got, c.want) {
			t.Errorf("NDCGAt(%v) = %.4f, want %.4f", c.ids, got, c.want)
		}
	}
	if NDCGAt(nil, nil, K) != 1 || NDCGAt(nil, []string{"a"}, K) != 0 {
		t.Error("a no-answer query scores 1 for an empty page and 0 otherwise")
	}
	// Only the first k count.
	if got := NDCGAt(map[string]int{"a": 2}, []string{"x", "a"}, 1); got != 0 {
		t.Errorf("NDCGAt at k=1 counted rank 2: %.3f", got)
	}
}

// TestGradedRecallAt checks that recall counts the best grade present.
func TestGradedRecallAt(t *testing.T) {
	if got := GradedRecallAt(map[string]int{"a": 2, "b": 1, "c": 2}, []string{"b", "a"}, K); got != 0.5 {
		t.Errorf("exact targets: got %.2f, want 0.5 (a of a, c; b is only related)", got)
	}
	if got := GradedRecallAt(map[string]int{"b": 1}, []string{"b"}, K); got != 1 {
		t.Errorf("related only: got %.2f, want 1", got)
	}
	if !math.IsNaN(GradedRecallAt(nil, nil, K)) {
		t.Error("a no-answer query has no recall")
	}
}

// TestReadGraded reads a set and refuses each kind of bad line.
func TestReadGraded(t *testing.T) {
	good := gradedHeader + "\nfood\tcheese\t\thc-1:2,hc-2:1\t\nnone\tbitcoin\t\t\tnothing\n"
	qs, err := ReadGraded(strings.NewReader(good))
	if err != nil || len(qs) != 2 || qs[0].Grades["hc-1"] != 2 || qs[0].Grades["hc-2"] != 1 || len(qs[1].Grades) != 0 {
		t.Fatalf("ReadGraded = %+v, %v", qs, err)
	}
	for name, line := range map[string]string{
		"fields":  "food\tcheese\t\thc-1:2",
		"grade":   "food\tcheese\t\thc-1:3\t",
		"noGrade": "food\tcheese\t\thc-1\t",
		"twice":   "food\tcheese\t\thc-1:2,hc-1:1\t",
		"emptyQ":  "food\t \t\thc-1:2\t",
		"class":   "\tcheese\t\thc-1:2\t",
		"repeat":  "food\tcheese\t\thc-1:2\t\nfood\tcheese\t\thc-2:2\t",
	} {
		if _, err := ReadGraded(strings.NewReader(gradedHeader + "\n" + line + "\n")); err == nil {
			t.Errorf("%s: %q read without an error", name, line)
		}
	}
	if _, err := ReadGraded(strings.NewReader("kind\tq\n")); err == nil {
		t.Error("a wrong header read without an error")
	}
}

// TestGradedScores checks the zero-result share, the no-answer count and
// the table.
func TestGradedScores(t *testing.T) {
	qs := []Graded{
		{Class: "food", Q: "cheese", Grades: map[string]int{"a": 2}},
		{Class: "food", Q: "milk", Grades: map[string]int{"b": 2}},
		{Class: "none", Q: "bitcoin", Grades: map[string]int{}},
		{Class: "none", Q: "xbox", Grades: map[string]int{}},
	}
	outs := []Outcome{{IDs: []string{"a"}}, {}, {}, {IDs: []string{"a"}}}
	s := GradedScores(qs, outs)
	all := s["all"]
	if all.N != 4 || all.Answerable != 2 || !near(all.NDCG, 0.5) || !near(all.Recall, 0.5) || !near(all.Zero, 0.5) || all.NoAnswer != 2 || all.Empty != 1 {
		t.Errorf("all: %+v", all)
	}
	var b bytes.Buffer
	GradedTable(&b, Classes(qs), []string{"x"}, []map[string]GradedScore{s})
	for _, want := range []string{"| food | 2 | 0.500 | 0.500 | 0.500 |", "| no-answer queries answered empty | 2 | 1 of 2 |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	// The generated set's figures carry nDCG and the empty answers too.
	plain := Scores([]Query{{Kind: KindExact, Targets: []string{"a"}}, {Kind: KindExact, Targets: []string{"b"}}}, []Outcome{{IDs: []string{"a"}}, {}})
	if sc := plain["all"]; !near(sc.NDCG, 0.5) || !near(sc.Zero, 0.5) {
		t.Errorf("Scores: nDCG %.3f, zero %.3f, want 0.5 and 0.5", sc.NDCG, sc.Zero)
	}
}
