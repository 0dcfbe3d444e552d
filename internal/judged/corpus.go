package judged

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"

	"github.com/rappel-ca/rappel"
)

// corpus is the records' searchable text as plain tokens, the judge of
// what a query means: a query's targets are the records holding every one
// of its words as a whole token (a word of several tokens, such as F-150,
// as adjacent tokens of one field; a word ending in * as the start of a
// token). It does no stemming and no typo tolerance, on purpose: it judges
// the search engine, it is not one.
type corpus struct {
	recs   []*rappel.Record
	fields [][][]string        // per record, its fields' tokens
	post   map[string][]int32  // token: records holding it, ascending
	vocab  []string            // every token, sorted
	loose  map[string][]string // cache of looseForms
}

func newCorpus(recs []*rappel.Record) *corpus {
	c := &corpus{recs: recs, post: map[string][]int32{}, loose: map[string][]string{}}
	for i, r := range recs {
		var fs [][]string
		for _, s := range searchText(r) {
			if t := wordTokens(s); len(t) > 0 {
				fs = append(fs, t)
				for _, tok := range t {
					p := c.post[tok]
					if len(p) == 0 || p[len(p)-1] != int32(i) {
						c.post[tok] = append(p, int32(i))
					}
				}
			}
		}
		c.fields = append(c.fields, fs)
	}
	for t := range c.post {
		c.vocab = append(c.vocab, t)
	}
	slices.Sort(c.vocab)
	return c
}

// searchText is the text of a record GET /recall searches, from
// rappel.Record.SearchedText, the fields the index reads, but what the
// notice advises: the judge decides what a search should find by its own
// matching, and the advice's wording is the same from notice to notice
// ("contact the company"), so that a query's word found only there names
// nearly every record and says nothing of what the search means.
func searchText(r *rappel.Record) []string {
	var out []string
	r.SearchedText(func(tier int, _, text string) {
		if tier != rappel.TextAdvice {
			out = append(out, text)
		}
	})
	return out
}

// wordTokens splits s into lower-case, accent-free runs of letters and
// digits.
func wordTokens(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		out = append(out, unaccent(f))
	}
	return out
}

// unaccent drops combining marks after decomposition and writes the
// ligatures out, as a person typing without accents does: é is e, œ is oe.
func unaccent(s string) string {
	if isASCII(s) {
		return s
	}
	out, _, err := transform.String(stripMarks, s)
	if err != nil {
		return s
	}
	return ligatures.Replace(out)
}

// stripMarks keeps state between calls: unaccent is for one goroutine,
// the generator's.
var (
	stripMarks = transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
	ligatures  = strings.NewReplacer("œ", "oe", "æ", "ae", "Œ", "OE", "Æ", "AE")
)

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// qword is one word of a query as the corpus reads it.
type qword struct {
	toks   []string
	prefix bool // the last token is the start of a word
}

// parseWords reads a query of plain words and "quoted phrases" (no
// operators), the last word a prefix when prefixLast is set; a word ending
// in * is a prefix too.
func parseWords(q string, prefixLast bool) []qword {
	var fields []string
	for rest := strings.TrimSpace(q); rest != ""; rest = strings.TrimSpace(rest) {
		if rest[0] == '"' {
			if end := strings.IndexByte(rest[1:], '"'); end >= 0 {
				fields = append(fields, rest[1:1+end])
				rest = rest[end+2:]
				continue
			}
		}
		f, after, _ := strings.Cut(rest, " ")
		fields = append(fields, f)
		rest = after
	}
	var out []qword
	for i, f := range fields {
		w := qword{prefix: strings.HasSuffix(f, "*") || (prefixLast && i == len(fields)-1)}
		w.toks = wordTokens(f)
		if len(w.toks) > 0 {
			out = append(out, w)
		}
	}
	return out
}

// docs returns the records matching every word of q, ascending. With
// loose set, a one-token word also matches tokens differing from it only
// by an ending of up to 2 letters (water, waters), what a stemming engine
// would also find.
func (c *corpus) docs(q string, prefixLast, loose bool) []int32 {
	var out []int32
	for i, w := range parseWords(q, prefixLast) {
		var ds []int32
		switch {
		case len(w.toks) == 1 && w.prefix:
			ds = c.union(c.prefixed(w.toks[0]))
		case len(w.toks) == 1 && loose:
			ds = c.union(c.looseForms(w.toks[0]))
		case len(w.toks) == 1:
			ds = c.post[w.toks[0]]
		default:
			ds = c.phrase(w)
		}
		if i == 0 {
			out = slices.Clone(ds)
		} else {
			out = intersect(out, ds)
		}
		if len(out) == 0 {
			return nil
		}
	}
	return out
}

// targets returns the record_ids of docs.
func (c *corpus) targets(docs []int32) []string {
	var ids []string
	for _, d := range docs {
		ids = append(ids, c.recs[d].RecordID)
	}
	slices.Sort(ids)
	return ids
}

func (c *corpus) prefixed(p string) []string {
	i, _ := slices.BinarySearch(c.vocab, p)
	var out []string
	for ; i < len(c.vocab) && strings.HasPrefix(c.vocab[i], p); i++ {
		out = append(out, c.vocab[i])
	}
	return out
}

func (c *corpus) looseForms(t string) []string {
	if f, ok := c.loose[t]; ok {
		return f
	}
	var out []string
	for _, v := range c.prefixed(t[:min(len(t), 4)]) {
		short, long := t, v
		if len(short) > len(long) {
			short, long = long, short
		}
		switch {
		case v == t,
			len(short) >= 4 && strings.HasPrefix(long, short) && len(long)-len(short) <= 2,
			len(short) >= 5 && strings.HasPrefix(long, short[:len(short)-1]) && len(long)-len(short) <= 3:
			out = append(out, v)
		}
	}
	c.loose[t] = out
	return out
}

func (c *corpus) union(toks []string) []int32 {
	var out []int32
	for _, t := range toks {
		out = append(out, c.post[t]...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// phrase returns the records with w's tokens adjacent in one field.
func (c *corpus) phrase(w qword) []int32 {
	var out []int32
	for _, d := range c.post[w.toks[0]] {
		if c.hasPhrase(d, w) {
			out = append(out, d)
		}
	}
	return out
}

func (c *corpus) hasPhrase(d int32, w qword) bool {
	for _, f := range c.fields[d] {
	start:
		for i := 0; i+len(w.toks) <= len(f); i++ {
			for j, t := range w.toks {
				last := j == len(w.toks)-1
				if f[i+j] != t && !(last && w.prefix && strings.HasPrefix(f[i+j], t)) {
					continue start
				}
			}
			return true
		}
	}
	return false
}

func intersect(a, b []int32) []int32 {
	var out []int32
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out
}
