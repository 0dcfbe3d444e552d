package edge

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/index"
)

// forgivingPage is a GET /recall page with its corrections.
type forgivingPage struct {
	Count       int                 `json:"count"`
	Corrections []rappel.Correction `json:"corrections"`
	LeftOut     []string            `json:"left_out"`
	Optional    []string            `json:"optional"`
	Results     []struct {
		RecordID string `json:"record_id"`
	} `json:"results"`
}

// bundleHandler serves the bundle's segment, as a node does.
func bundleHandler(t *testing.T) http.Handler {
	t.Helper()
	c := &index.Catalog{}
	c.Swap(mustBundleSegment(t))
	s, _ := MustServer(t, c)
	s.Logger = discardLogger()
	return s.Handler()
}

// getJSON sends GET path to h and decodes a 200's body into v, returning
// the status and the body.
func getJSON(t *testing.T, h http.Handler, path string, v any) (int, string) {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, path, nil)
	r.Header.Set("X-Gateway-Key", testKey)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code == http.StatusOK && v != nil {
		if err := json.Unmarshal(w.Body.Bytes(), v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	return w.Code, w.Body.String()
}

func forgive(t *testing.T, h http.Handler, q string, extra ...string) forgivingPage {
	t.Helper()
	var p forgivingPage
	path := "/recall?limit=10&q=" + url.QueryEscape(q)
	for _, e := range extra {
		path += "&" + e
	}
	if code, body := getJSON(t, h, path, &p); code != http.StatusOK {
		t.Fatalf("%s: %d %.300s", path, code, body)
	}
	return p
}

// TestSearch_Typos checks misspelled words against the bundle: they find
// what the word spelled right finds, say what they were matched to, and
// typos=off turns that off.
func TestSearch_Typos(t *testing.T) {
	h := bundleHandler(t)
	for _, c := range []struct{ typed, right, matched string }{
		{"lysteria", "listeria", "listeria"},
		{"listera", "listeria", "listeria"},
		{"choclate", "chocolate", "chocolat"},
		{"salmonnella", "salmonella", ""},
		{"contaminaton", "contamination", "contamin"},
	} {
		right := forgive(t, h, c.right)
		typed := forgive(t, h, c.typed)
		if right.Count == 0 || typed.Count == 0 {
			t.Errorf("%s finds %d, %s %d", c.typed, typed.Count, c.right, right.Count)
		}
		if c.matched != "" && (len(typed.Corrections) != 1 || !slices.Contains(typed.Corrections[0].Matched, c.matched)) {
			t.Errorf("%s: corrections %+v, want %s among them", c.typed, typed.Corrections, c.matched)
		}
		if off := forgive(t, h, c.typed, "typos=off"); c.matched != "" && off.Count != 0 {
			t.Errorf("%s with typos=off finds %d", c.typed, off.Count)
		}
	}
	// Short words and words with digits are never corrected.
	for _, q := range []string{"brei", "f15O", "2019l23"} {
		if p := forgive(t, h, q); len(p.Corrections) != 0 {
			t.Errorf("%s was corrected: %+v", q, p.Corrections)
		}
	}
}

// TestSearch_ExactWordsKeepCounts checks that no correctly spelled word of
// the records changes its count: a word that matches exactly is never
// expanded.
func TestSearch_ExactWordsKeepCounts(t *testing.T) {
	h := bundleHandler(t)
	seen := map[string]bool{}
	var words []string
	for _, r := range bundleRecords(t)[:400] {
		for _, tr := range []*rappel.Translation{r.Translations.EN, r.Translations.FR} {
			if tr == nil {
				continue
			}
			for _, w := range strings.FieldsFunc(tr.Title, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 127) }) {
				if lw := strings.ToLower(w); len(lw) >= 5 && !seen[lw] {
					seen[lw] = true
					words = append(words, lw)
				}
			}
		}
	}
	if len(words) < 100 {
		t.Fatalf("only %d words", len(words))
	}
	for _, w := range words {
		on, off := forgive(t, h, w), forgive(t, h, w, "typos=off")
		if on.Count != off.Count || len(on.Corrections) != 0 {
			t.Errorf("%s: %d records with typos, %d without; corrections %+v", w, on.Count, off.Count, on.Corrections)
		}
	}
	t.Logf("%d words keep their counts", len(words))
}

// TestSearch_SplitAndJoined checks words written joined, split or
// hyphenated: each form finds what the others find.
func TestSearch_SplitAndJoined(t *testing.T) {
	h := bundleHandler(t)
	for _, forms := range [][]string{
		{"f150", "F-150", "F 150"},
		{"crv", "CR-V"},
		{"ecoli", "E. coli", "E.coli"},
		{"seatbelt", "seat belt"},
		{"brakefluid", "brake fluid"},
		{"airbag", "air bag"},
	} {
		want := forgive(t, h, forms[0]).Count
		if want == 0 {
			t.Errorf("%s finds nothing", forms[0])
		}
		for _, f := range forms[1:] {
			if got := forgive(t, h, f).Count; got != want {
				t.Errorf("%s finds %d, %s %d", f, got, forms[0], want)
			}
		}
	}
}

// TestSearch_Prefixes checks word* and prefix=last, and the wildcards
// refused with a sentence.
func TestSearch_Prefixes(t *testing.T) {
	h := bundleHandler(t)
	full := forgive(t, h, "listeria").Count
	for _, q := range []struct{ q, extra string }{{"lister*", ""}, {"listeri", "prefix=last"}, {"frozen lister", "prefix=last"}} {
		p := forgive(t, h, q.q, q.extra)
		if p.Count == 0 || (q.q != "frozen lister" && p.Count < full) {
			t.Errorf("%s %s finds %d; listeria finds %d", q.q, q.extra, p.Count, full)
		}
	}
	if forgive(t, h, "lysteri", "prefix=last").Count == 0 {
		t.Error("a typed prefix with a typo finds nothing")
	}
	for _, q := range []string{"*", "a*", "l*steria", `"pea* butter"`, "**"} {
		code, body := getJSON(t, h, "/recall?q="+url.QueryEscape(q), nil)
		if code != http.StatusUnprocessableEntity || !strings.Contains(body, "*") {
			t.Errorf("q=%s: %d %s", q, code, body)
		}
	}
	// Many wildcards and many misspellings stay within the budget.
	many := strings.Repeat("re* ", 30)
	if code, body := getJSON(t, h, "/recall?limit=1&q="+url.QueryEscape(many), nil); code != http.StatusOK {
		t.Errorf("30 wildcards: %d %.300s", code, body)
	}
	typos := strings.Repeat("lysteria choclate ", 16)
	if code, body := getJSON(t, h, "/recall?limit=1&q="+url.QueryEscape(typos), nil); code != http.StatusOK {
		t.Errorf("32 misspelled words: %d %.300s", code, body)
	}
}

// TestSearch_Synonyms checks that every entry of a synonym group, quoted,
// finds what the others find (each the union of the group's phrases), and
// typed as words at least as much.
func TestSearch_Synonyms(t *testing.T) {
	h := bundleHandler(t)
	for _, group := range index.SynonymGroups() {
		want := forgive(t, h, `"`+group[0]+`"`).Count
		for _, e := range group {
			if got := forgive(t, h, `"`+e+`"`).Count; got != want {
				t.Errorf("%q finds %d, %q %d", e, got, group[0], want)
			}
			if got := forgive(t, h, e).Count; got < want {
				t.Errorf("%s typed as words finds %d, fewer than the group's %d", e, got, want)
			}
		}
	}
	// A plural finds what its singular finds: the list is matched on
	// stems, as the index is.
	for _, c := range [][2]string{{"arachide", "arachides"}, {"peanut", "peanuts"}, {"moutarde", "moutardes"}, {"egg", "eggs"}} {
		if one, many := forgive(t, h, c[0]).Count, forgive(t, h, c[1]).Count; many < one {
			t.Errorf("%q finds %d, fewer than %q's %d", c[1], many, c[0], one)
		}
	}
}

// TestSuggest checks GET /recall/suggest: completions with counts, a
// typo in what is typed, the newest matching recalls, and nothing to
// complete.
func TestSuggest(t *testing.T) {
	h := bundleHandler(t)
	for _, c := range []struct{ q, want string }{{"lysteri", "listeria"}, {"chocol", "chocolate"}, {"brie chee", "cheese"}} {
		var s rappel.Suggestions
		if code, body := getJSON(t, h, "/recall/suggest?limit=5&q="+url.QueryEscape(c.q), &s); code != http.StatusOK {
			t.Fatalf("%s: %d %s", c.q, code, body)
		}
		i := slices.IndexFunc(s.Terms, func(st rappel.SuggestedTerm) bool { return st.Term == c.want })
		if i < 0 || s.Terms[i].Count != forgive(t, h, c.want, "typos=off").Count || len(s.Recalls) == 0 || len(s.Recalls) > 5 {
			t.Errorf("%s: %+v", c.q, s)
		}
	}
	for _, q := range []string{"", "cheese "} {
		var s rappel.Suggestions
		if code, body := getJSON(t, h, "/recall/suggest?q="+url.QueryEscape(q), &s); code != http.StatusOK || len(s.Terms)+len(s.Recalls) != 0 {
			t.Errorf("q=%q: %d %s", q, code, body)
		}
	}
}
