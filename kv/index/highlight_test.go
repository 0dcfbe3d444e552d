package index

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
)

// highlightRecords are two records whose text tests escaping, stemming,
// accents, long text and product names.
func highlightRecords() []*rappel.Record {
	long := make([]string, 60)
	for i := range long {
		long[i] = fmt.Sprintf("w%d", i)
	}
	long[40] = "walnuts"
	a := testRecord("hc-1")
	a.Translations.EN = &rappel.Translation{
		Title:              `<script>alert("x")</script> & 'quotes' Peanut butter cookies`,
		ProductDescription: strings.Join(long, " ") + ".",
		HazardDescription:  "May contain peanut.",
	}
	a.Translations.FR = &rappel.Translation{Title: "Biscuits au beurre d'arachide : sécurité", HazardDescription: "Peut contenir des arachides."}
	a.ProductList = []rappel.Product{{Name: "Gizmo 3000 cookies"}}
	b := testRecord("hc-2")
	b.EventDate = "2023-01-01"
	b.Translations.FR = nil
	long[40], long[20] = "w40", "pistachios"
	b.Translations.EN.HazardDescription = strings.Join(long, " ")
	return []*rappel.Record{a, b}
}

// highlightsOf searches s with q (text), highlight on, and returns each
// result's highlights, checking that the rest of each result is the
// record the search without highlights returns.
func highlightsOf(t *testing.T, s *Snapshot, text, lang string) []map[string]map[string]string {
	t.Helper()
	q := &rappel.Search{Lang: lang}
	if text != "" {
		q.Query = mustQuery(t, text)
	}
	plain := search(t, s, q)
	q.Highlight = true
	page := search(t, s, q)
	// The record's own bytes escape '<' as encoding/json does; the
	// highlights' markup reaches the client as it is.
	for _, part := range bytes.Split(page.Results, []byte(`"highlights":`))[1:] {
		if end := bytes.IndexByte(part, '}'); bytes.Contains(part[:end], []byte(`\u003c`)) {
			t.Errorf("q=%s: the markup is escaped for JSON: %s", text, part)
		}
	}
	var with, without []map[string]any
	if err := json.Unmarshal(page.Results, &with); err != nil {
		t.Fatalf("q=%s: %v: %s", text, err, page.Results)
	}
	if err := json.Unmarshal(plain.Results, &without); err != nil {
		t.Fatal(err)
	}
	var out []map[string]map[string]string
	for i, r := range with {
		b, _ := json.Marshal(r["highlights"])
		var h map[string]map[string]string
		if err := json.Unmarshal(b, &h); err != nil || h == nil {
			t.Fatalf("q=%s: highlights %s: %v", text, b, err)
		}
		out = append(out, h)
		delete(r, "highlights")
		if !reflect.DeepEqual(r, without[i]) {
			t.Errorf("q=%s: the record changed with highlights:\n%v\n%v", text, r, without[i])
		}
	}
	return out
}

func TestHighlight(t *testing.T) {
	s := mustBuild(t, highlightRecords())
	// The window holds the last fragmentWords words: the match is near the
	// end.
	window := "…w30 w31 w32 w33 w34 w35 w36 w37 w38 w39 <em>walnuts</em> w41 w42 w43 w44 w45 w46 w47 w48 w49 w50 w51 w52 w53 w54 w55 w56 w57 w58 w59."
	for _, c := range []struct {
		q, lang string
		want    map[string]map[string]string // of the first result
	}{
		// The synonym list's "arachide" is marked too.
		{"peanut", "", map[string]map[string]string{
			"en": {"title": `&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &#39;quotes&#39; <em>Peanut</em> butter cookies`,
				"hazard": "May contain <em>peanut</em>."},
			"fr": {"title": "Biscuits au beurre d&#39;<em>arachide</em> : sécurité", "hazard": "Peut contenir des <em>arachides</em>."}}},
		{"script", "", map[string]map[string]string{
			"en": {"title": `&lt;<em>script</em>&gt;alert(&#34;x&#34;)&lt;/<em>script</em>&gt; &amp; &#39;quotes&#39; Peanut butter cookies`}}},
		// Stems: "cookie" finds "cookies", in the title and a product name.
		{"cookie", "", map[string]map[string]string{
			"en": {"title": `&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &#39;quotes&#39; Peanut butter <em>cookies</em>`,
				"product": "Gizmo 3000 <em>cookies</em>"},
			"fr": {"product": "Gizmo 3000 <em>cookies</em>"}}},
		// Accents: "securite" finds "sécurité"; French stems. The plural
		// "arachides" reaches the synonym list's "peanut" too.
		{"securite arachides", "", map[string]map[string]string{
			"en": {"title": `&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &#39;quotes&#39; <em>Peanut</em> butter cookies`,
				"hazard": "May contain <em>peanut</em>."},
			"fr": {"title": "Biscuits au beurre d&#39;<em>arachide</em> : <em>sécurité</em>", "hazard": "Peut contenir des <em>arachides</em>."}}},
		{"securite", rappel.LangEN, map[string]map[string]string{}},
		{`"peanut butter" OR gizmo`, rappel.LangEN, map[string]map[string]string{
			"en": {"title": `&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &#39;quotes&#39; <em>Peanut</em> <em>butter</em> cookies`,
				"product": "<em>Gizmo</em> 3000 cookies", "hazard": "May contain <em>peanut</em>."}}},
		// A long text is cut to a window around the first match.
		{"walnut", "", map[string]map[string]string{"en": {"product": window}}},
		// Cut at both ends: fragmentLead words before the match.
		{"pistachio", "", map[string]map[string]string{"en": {"hazard": "…w12 w13 w14 w15 w16 w17 w18 w19 <em>pistachios</em> w21 w22 w23 w24 w25 w26 w27 w28 w29 w30 w31 w32 w33 w34 w35 w36 w37 w38 w39 w40 w41…"}}},
		// An excluded word is not a match.
		{"walnut -zzz", "", map[string]map[string]string{"en": {"product": window}}},
	} {
		got := highlightsOf(t, s, c.q, c.lang)
		if len(got) == 0 || !reflect.DeepEqual(got[0], c.want) {
			t.Errorf("q=%s lang=%s:\n got %q\nwant %q", c.q, c.lang, got, c.want)
		}
	}
	// Without q, or matching nothing of a record's text, highlights are
	// empty.
	for _, h := range append(highlightsOf(t, s, "", ""), highlightsOf(t, s, "-peanut", "fr")...) {
		if len(h) != 0 {
			t.Errorf("highlights %v without a positive word", h)
		}
	}
}

func TestMatchForms(t *testing.T) {
	s := mustBuild(t, highlightRecords())
	fs := s.MatchForms(mustQuery(t, `Cookies "sécurité routière" -peanut`))
	for _, c := range []struct {
		stream int
		word   string
		want   bool
	}{
		{streamEN, "cookie", true}, {streamEN, "COOKIES", true}, {streamFR, "cookies", true},
		{streamFR, "securite", true}, {streamFR, "sécurité", true}, {streamFR, "routières", true},
		{streamEN, "peanut", false}, {streamFR, "peanut", false}, {streamEN, "butter", false},
	} {
		if got := fs.has(c.stream, s.text.an.forms(c.stream, c.word)); got != c.want {
			t.Errorf("stream %d, %q: %v, want %v", c.stream, c.word, got, c.want)
		}
	}
	if fs := s.MatchForms(nil); len(fs[streamEN])+len(fs[streamFR]) != 0 {
		t.Errorf("no query matches %v", fs)
	}
}
