package index

import (
	"bytes"
	"encoding/json"
	"html"
	"strings"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/jsonx"
)

// Fragments: a highlighted text longer than fragmentWords words is cut to
// a window of that many, starting fragmentLead words before its first
// match, and the cuts are marked with an ellipsis.
const (
	fragmentWords = 30
	fragmentLead  = 8
)

// highlighter adds to records' JSON the fragments of their text that a
// query matches (docs/api.md, "Searching"):
//
//	"highlights":{"en":{"title":"…","product":"…","hazard":"…"},"fr":{…}}
//
// A field is there when one of its words matches, a language when one of
// its fields is, and only the language asked for when the search has one.
// Matched words are marked <em>…</em>; everything else is HTML-escaped.
// One highlighter serves one search: it keeps scratch space.
type highlighter struct {
	forms   Forms
	lang    string
	scratch []byte
	words   []word
	frag    []byte
	enc     bytes.Buffer
}

// word is one token of a text: its bytes and whether it matches.
type word struct {
	start, end int
	match      bool
}

// highlighter returns the highlighter of q, nil when q does not ask for
// highlights.
func (v *View) highlighter(q *rappel.Search, exp *expansion) *highlighter {
	if !q.Highlight {
		return nil
	}
	fs := v.MatchForms(q.Query)
	fs.addExpansion(v.base.text.an, exp)
	return &highlighter{forms: fs, lang: q.Lang}
}

// highlightSource is what highlights are made of, decoded from a record's
// JSON.
type highlightSource struct {
	Translations rappel.Translations `json:"translations"`
	ProductList  []struct {
		Name string `json:"name"`
	} `json:"product_list"`
}

// append adds the highlights of doc, a document of s, to dst, which ends
// with doc's JSON: the field goes in before the record's closing brace, so
// the record's bytes are spliced as they are.
func (h *highlighter) append(dst []byte, s *Snapshot, doc int32) []byte {
	h.scratch = s.enc.appendDoc(h.scratch[:0], doc, "")
	var src highlightSource
	// The snapshot encoded these bytes itself; they decode.
	_ = jsonx.Unmarshal(h.scratch, &src)
	dst = append(dst[:len(dst)-1], `,"highlights":{`...)
	sep := ""
	for _, l := range []struct {
		lang   string
		stream int
		tr     *rappel.Translation
	}{{rappel.LangEN, streamEN, src.Translations.EN}, {rappel.LangFR, streamFR, src.Translations.FR}} {
		if l.tr == nil || (h.lang != "" && h.lang != l.lang) {
			continue
		}
		products := []string{l.tr.ProductDescription}
		for _, p := range src.ProductList {
			products = append(products, p.Name)
		}
		mark := len(dst)
		dst = append(dst, sep+`"`+l.lang+`":{`...)
		inner := ""
		for _, f := range []struct {
			key   string
			texts []string // the first that matches is shown
		}{{"title", []string{l.tr.Title}}, {"product", products}, {"hazard", []string{l.tr.HazardDescription}}} {
			for _, text := range f.texts {
				if frag, ok := h.fragment(s.text.an, l.stream, text); ok {
					dst = append(dst, inner+`"`+f.key+`":`...)
					dst = append(dst, frag...)
					inner = ","
					break
				}
			}
		}
		if inner == "" {
			dst = dst[:mark] // nothing of this language matched
			continue
		}
		dst = append(dst, '}')
		sep = ","
	}
	return append(dst, "}}"...)
}

// fragment returns text's fragment around its matches, as a JSON string,
// and false when no word of text matches. The words are analyzed as the
// index analyzes the stream's text.
func (h *highlighter) fragment(an *analyzer, stream int, text string) ([]byte, bool) {
	h.words = h.words[:0]
	first, at := -1, 0
	tokens(text, func(w string) {
		// Only separators lie between two tokens, so the next token is
		// the first occurrence of its text after the last one.
		start := at + strings.Index(text[at:], w)
		at = start + len(w)
		m := h.forms.has(stream, an.forms(stream, w))
		if m && first < 0 {
			first = len(h.words)
		}
		h.words = append(h.words, word{start, at, m})
	})
	if first < 0 {
		return nil, false
	}
	ws := h.words
	lo, hi := 0, len(ws)
	if len(ws) > fragmentWords {
		hi = min(len(ws), max(0, first-fragmentLead)+fragmentWords)
		lo = hi - fragmentWords
	}
	from, to := 0, len(text)
	b := h.frag[:0]
	if lo > 0 {
		from = ws[lo].start
		b = append(b, "…"...)
	}
	if hi < len(ws) {
		to = ws[hi-1].end
	}
	for _, w := range ws[lo:hi] {
		if !w.match {
			continue
		}
		b = append(b, html.EscapeString(text[from:w.start])...)
		b = append(b, "<em>"...)
		b = append(b, html.EscapeString(text[w.start:w.end])...)
		b = append(b, "</em>"...)
		from = w.end
	}
	b = append(b, html.EscapeString(text[from:to])...)
	if hi < len(ws) {
		b = append(b, "…"...)
	}
	h.frag = b
	// The markup is meant to reach the client as it is: no \u003c.
	h.enc.Reset()
	e := json.NewEncoder(&h.enc)
	e.SetEscapeHTML(false)
	_ = e.Encode(string(b)) // a string always encodes
	return bytes.TrimSuffix(h.enc.Bytes(), []byte("\n")), true
}
