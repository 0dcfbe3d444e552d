package judged

import (
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rappel-ca/rappel"
)

// Quotas of each kind in the generated set.
var quotas = map[string]int{
	KindTypo: 130, KindJoined: 30, KindSplit: 25, KindFrench: 66, KindPrefix: 66, KindSynonym: 32, KindExact: 45,
}

// perChange caps how many queries of a kind make the same change (f150,
// vus, north star), so that one rewrite does not weigh on a kind's figure.
var perChange = map[string]int{KindJoined: 3, KindSplit: 3, KindSynonym: 4}

// Generate derives the judged set from recs, the same set for the same
// records: for each kind it visits the records in a fixed shuffled order,
// takes the first words of a title (EN, or FR for French queries) until
// they name at most MaxTargets records, and rewrites them as a person
// might type them. A query is kept only when its intended words name the
// same records whether or not word endings are ignored (so that a stemming
// engine and this judge agree on the targets), and when the rewritten
// words are not themselves words of the corpus (a misspelling that is
// another real word asks for something else).
func Generate(recs []*rappel.Record) []Query {
	g := &gen{c: newCorpus(recs), seen: map[string]bool{}}
	var out []Query
	for i, kind := range Kinds {
		g.rng = rand.New(rand.NewPCG(uint64(i+1), 2026))
		n := 0
		changes := map[string]int{}
		for _, d := range g.rng.Perm(len(recs)) {
			if n == quotas[kind] {
				break
			}
			q, ok := g.make(kind, int32(d))
			if !ok || g.seen[q.Q+"?"+q.Params.Encode()] || slices.Contains(dropped, q.Q) {
				continue
			}
			if limit := perChange[kind]; limit > 0 {
				change := changed(q)
				if changes[change] == limit {
					continue
				}
				changes[change]++
			}
			g.seen[q.Q+"?"+q.Params.Encode()] = true
			out = append(out, q)
			n++
		}
	}
	return out
}

// changed returns the words of q's text its intended words do not have.
func changed(q Query) string {
	var out []string
	for _, w := range strings.Fields(q.Q) {
		if !slices.Contains(strings.Fields(q.Intended), w) {
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

// dropped are generated queries a reading found ambiguous or unrealistic;
// the generator skips them and takes the next record.
var dropped = []string{
	"suspension orale amoxicilline dr.", // ends on half a brand
}

type gen struct {
	c    *corpus
	rng  *rand.Rand
	seen map[string]bool
}

func (g *gen) make(kind string, d int32) (Query, bool) {
	r := g.c.recs[d]
	switch kind {
	case KindTypo:
		return g.typo(r, rappel.LangEN, KindTypo)
	case KindJoined:
		return g.joined(r)
	case KindSplit:
		return g.split(r)
	case KindFrench:
		switch g.rng.IntN(3) {
		case 0:
			return g.typo(r, rappel.LangFR, KindFrench)
		case 1:
			return g.french(r, false)
		}
		return g.french(r, true)
	case KindPrefix:
		return g.prefix(r)
	case KindSynonym:
		return g.synonym(r)
	}
	return g.exact(r)
}

// intended picks the first words of r's title in lang, plus must (words
// the kind needs, placed where the title has them or last), until they
// name 1 to MaxTargets records, r among them. It fails when no choice of
// up to 6 words does, or when the records named depend on word endings.
func (g *gen) intended(r *rappel.Record, lang string, must ...string) ([]string, []string, bool) {
	words := titleWords(r.Title(lang))
	if len(words) == 0 {
		return nil, nil, false
	}
	for _, m := range must {
		words = mergePhrase(words, m)
		if !slices.Contains(words, m) {
			words = append(words, m)
		}
	}
	for k := 2; k <= min(6, len(words)); k++ {
		chosen := slices.Clone(words[:k])
		for _, m := range must {
			if !slices.Contains(chosen, m) {
				chosen = append(chosen, m)
			}
		}
		q := joinWords(chosen)
		docs := g.c.docs(q, false, false)
		if len(docs) == 0 || len(docs) > MaxTargets {
			continue
		}
		if !slices.Equal(docs, g.c.docs(q, false, true)) || !slices.Contains(g.c.targets(docs), r.RecordID) {
			return nil, nil, false
		}
		return chosen, g.c.targets(docs), true
	}
	return nil, nil, false
}

// joinWords writes words as a q: a word holding a space is quoted.
func joinWords(words []string) string {
	var parts []string
	for _, w := range words {
		if strings.Contains(w, " ") {
			w = `"` + w + `"`
		}
		parts = append(parts, w)
	}
	return strings.Join(parts, " ")
}

// lang picks the language of a query from r: French one time in four,
// when r has French text.
func (g *gen) lang(r *rappel.Record) string {
	if g.rng.IntN(4) == 0 && r.Translations.FR != nil {
		return rappel.LangFR
	}
	return rappel.LangEN
}

func (g *gen) exact(r *rappel.Record) (Query, bool) {
	lang := g.lang(r)
	words, targets, ok := g.intended(r, lang)
	if !ok {
		return Query{}, false
	}
	q := joinWords(words)
	return Query{Kind: KindExact, Variant: lang, Q: q, Params: langParams(lang), Targets: targets, Intended: q}, true
}

func langParams(lang string) url.Values {
	if lang == rappel.LangFR {
		return url.Values{"lang": {"fr"}}
	}
	return url.Values{}
}

// typo misspells one word of 5 letters or more of the intended words: one
// edit for 5 to 8 letters, two for 9 or more, never the first letter.
func (g *gen) typo(r *rappel.Record, lang, kind string) (Query, bool) {
	words, targets, ok := g.intended(r, lang)
	if !ok {
		return Query{}, false
	}
	var candidates []int
	for i := range words {
		candidates = append(candidates, i)
	}
	if kind == KindFrench {
		candidates = frenchWords(r, words) // misspell a French word
	}
	var long []int
	for _, i := range candidates {
		if n := utf8.RuneCountInString(words[i]); n >= 5 && isLetters(words[i]) {
			long = append(long, i)
		}
	}
	if len(long) == 0 {
		return Query{}, false
	}
	i := long[g.rng.IntN(len(long))]
	edits := 1
	if utf8.RuneCountInString(words[i]) >= 9 {
		edits = 2
	}
	bad, ops, ok := g.misspell(words[i], edits)
	if !ok {
		return Query{}, false
	}
	typed := slices.Clone(words)
	typed[i] = bad
	return Query{Kind: kind, Variant: strings.Join(ops, "+"), Q: joinWords(typed), Params: langParams(lang),
		Targets: targets, Intended: joinWords(words)}, true
}

// misspell makes n edits to w (deletion, insertion or substitution of a
// neighbouring key, transposition of two letters), keeping its first
// letter and its ending's meaning (no s added or removed at the end). It
// fails when the result is a word of the corpus or is not n edits away.
func (g *gen) misspell(w string, n int) (string, []string, bool) {
	for range 20 {
		rs := []rune(w)
		var ops []string
		for range n {
			var op string
			rs, op = g.edit(rs)
			ops = append(ops, op)
		}
		bad := string(rs)
		if rappel.OSADistance([]rune(w), rs) != n || rs[0] != []rune(w)[0] || len(g.c.post[unaccent(bad)]) > 0 {
			continue
		}
		if last := rs[len(rs)-1]; last == 's' && !strings.HasSuffix(w, "s") || strings.HasSuffix(w, "s") && last != 's' {
			continue
		}
		return bad, ops, true
	}
	return "", nil, false
}

func (g *gen) edit(rs []rune) ([]rune, string) {
	i := 1 + g.rng.IntN(len(rs)-1) // never the first letter
	switch g.rng.IntN(4) {
	case 0:
		return slices.Delete(slices.Clone(rs), i, i+1), "deletion"
	case 1:
		ins := rs[i-1] // a doubled letter, or a neighbour of the one before
		if nb := neighbours[ins]; nb != "" && g.rng.IntN(2) == 0 {
			ins = rune(nb[g.rng.IntN(len(nb))])
		}
		return slices.Insert(slices.Clone(rs), i, ins), "insertion"
	case 2:
		nb := neighbours[unicode.ToLower(rs[i])]
		if nb == "" {
			return slices.Delete(slices.Clone(rs), i, i+1), "deletion"
		}
		out := slices.Clone(rs)
		out[i] = rune(nb[g.rng.IntN(len(nb))])
		return out, "substitution"
	}
	if i == len(rs)-1 {
		i--
	}
	if i < 1 {
		return slices.Delete(slices.Clone(rs), len(rs)-1, len(rs)), "deletion"
	}
	out := slices.Clone(rs)
	out[i], out[i+1] = out[i+1], out[i]
	return out, "transposition"
}

// neighbours are the keys around each letter on a QWERTY keyboard.
var neighbours = map[rune]string{
	'q': "wa", 'w': "qes", 'e': "wrd", 'r': "etf", 't': "ryg", 'y': "tuh", 'u': "yij", 'i': "uok", 'o': "ipl", 'p': "ol",
	'a': "qsz", 's': "adw", 'd': "sfe", 'f': "dgr", 'g': "fht", 'h': "gjy", 'j': "hku", 'k': "jli", 'l': "ko",
	'z': "xa", 'x': "zcs", 'c': "xvd", 'v': "cbf", 'b': "vng", 'n': "bmh", 'm': "nj",
}

func isLetters(w string) bool {
	for _, r := range w {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return w != ""
}

// joinable are the names of several tokens people write as one word,
// besides hyphenated models (F-150, CR-V): the title word pairs, and E. coli.
var joinable = []string{"e.coli", "high chair", "hair dryer", "ice cream", "bunk bed", "baby gate", "seat belt"}

// joined writes a name of several tokens of the title as one word:
// f-150 as f150, "high chair" as highchair.
func (g *gen) joined(r *rappel.Record) (Query, bool) {
	words := titleWords(r.Title(rappel.LangEN))
	var name, variant string
	for _, w := range words {
		if strings.Contains(w, "-") && len(wordTokens(w)) > 1 {
			name, variant = w, "hyphen"
			break
		}
		if w == "e.coli" {
			name, variant = w, "dot"
		}
	}
	title := strings.Join(words, " ")
	for _, j := range joinable {
		if name == "" && strings.Contains(j, " ") && strings.Contains(title, j) {
			name, variant = j, "space"
		}
	}
	if name == "" {
		return Query{}, false
	}
	words, targets, ok := g.intended(r, rappel.LangEN, name)
	if !ok {
		return Query{}, false
	}
	typed := slices.Clone(words)
	i := slices.Index(typed, name)
	typed[i] = strings.Join(wordTokens(name), "")
	if len(g.c.post[typed[i]]) > 0 {
		return Query{}, false
	}
	return Query{Kind: KindJoined, Variant: variant, Q: joinWords(typed), Params: url.Values{}, Targets: targets, Intended: joinWords(words)}, true
}

// compounds are words of the titles people also write as two: brands
// joined from two words, and common compounds.
func (g *gen) compound(w string) (string, bool) {
	if two, ok := compounds[w]; ok {
		return two, true
	}
	rs := []rune(w)
	if len(rs) < 6 || !isLetters(w) || slices.Contains(notCompounds, w) {
		return "", false
	}
	best := ""
	for i := 3; i <= len(rs)-3; i++ {
		a, b := string(rs[:i]), string(rs[i:])
		if len(g.c.post[a]) >= 20 && len(g.c.post[b]) >= 20 && wordLike(a) && wordLike(b) {
			best = a + " " + b
		}
	}
	return best, best != ""
}

// compounds are common words written as two, checked first; notCompounds
// are words that only look made of two.
var (
	compounds    = map[string]string{"airbag": "air bag", "toothpaste": "tooth paste"}
	notCompounds = []string{"malfunction", "surface", "pressure", "infant", "contact", "passport"}
)

// wordLike leaves out halves that are endings rather than words.
func wordLike(s string) bool {
	switch s {
	case "ing", "ers", "ies", "ion", "ment", "ness", "tion", "able", "ed", "est", "ter", "ted", "per", "ent", "ant", "ine", "ate", "ous":
		return false
	}
	return true
}

// split writes a word of the title as two words: airbag as air bag,
// Kidmax as kid max.
func (g *gen) split(r *rappel.Record) (Query, bool) {
	for _, w := range titleWords(r.Title(rappel.LangEN)) {
		two, ok := g.compound(w)
		if !ok {
			continue
		}
		words, targets, ok := g.intended(r, rappel.LangEN, w)
		if !ok {
			return Query{}, false
		}
		typed := slices.Clone(words)
		typed[slices.Index(typed, w)] = two
		q := strings.Join(typed, " ")
		return Query{Kind: KindSplit, Variant: "space", Q: q, Params: url.Values{}, Targets: targets, Intended: joinWords(words)}, true
	}
	return Query{}, false
}

// french takes the words of the French title, as written (accents) or
// without their accents (noaccent, which needs a word that has one).
func (g *gen) french(r *rappel.Record, strip bool) (Query, bool) {
	if r.Translations.FR == nil {
		return Query{}, false
	}
	words, targets, ok := g.intended(r, rappel.LangFR)
	if !ok || len(frenchWords(r, words)) == 0 {
		return Query{}, false
	}
	q := joinWords(words)
	variant := "written"
	if strip {
		if isASCII(q) {
			return Query{}, false
		}
		q, variant = unaccent(q), "noaccent"
	}
	return Query{Kind: KindFrench, Variant: variant, Q: q, Params: langParams(rappel.LangFR), Targets: targets, Intended: joinWords(words)}, true
}

// frenchWords returns the indexes of words that r's English title does
// not have: the French words of a query taken from the French title.
func frenchWords(r *rappel.Record, words []string) []int {
	en := titleWords(r.Title(rappel.LangEN))
	var out []int
	for i, w := range words {
		if r.Translations.EN == nil || !slices.Contains(en, w) {
			out = append(out, i)
		}
	}
	return out
}

// prefix cuts a word of 5 letters or more to its first 3 to 6 letters:
// the last word with prefix=last (typed as you type), or any word with *.
func (g *gen) prefix(r *rappel.Record) (Query, bool) {
	lang := g.lang(r)
	words, _, ok := g.intended(r, lang)
	if !ok {
		return Query{}, false
	}
	star := g.rng.IntN(10) < 3
	i := len(words) - 1
	if star {
		i = g.rng.IntN(len(words))
	}
	rs := []rune(words[i])
	if len(rs) < 5 || !isLetters(words[i]) {
		return Query{}, false
	}
	cut := 3 + g.rng.IntN(min(4, len(rs)-3))
	typed := slices.Clone(words)
	typed[i] = string(rs[:cut])
	params, variant := langParams(lang), "prefix-last"
	if star {
		typed[i] += "*"
		variant = "star"
	} else {
		params.Set("prefix", "last")
	}
	intended := slices.Clone(typed)
	intended[i] = string(rs[:cut]) + "*"
	docs := g.c.docs(joinWords(intended), false, false)
	if len(docs) == 0 || len(docs) > MaxTargets {
		return Query{}, false
	}
	return Query{Kind: KindPrefix, Variant: variant, Q: joinWords(typed), Params: params, Targets: g.c.targets(docs), Intended: joinWords(intended)}, true
}

// synonyms are words of the records (as their titles or categories write
// them) and what a person may type instead: the other language's word, or
// another spelling.
var synonyms = []struct{ word, typed, field string }{
	{"airbag", "coussin gonflable", ""},
	{"suv", "vus", "vehicle_category"},
	{"ground beef", "bœuf haché", ""},
	{"mould", "mold", ""},
	{"peanut", "arachide", ""},
	{"milk", "lait", ""},
	{"wheat", "blé", ""},
	{"mustard", "moutarde", ""},
	{"soy", "soja", ""},
	{"egg", "œuf", ""},
	{"tires", "pneus", ""},
	{"crib", "lit de bébé", ""},
	{"stroller", "poussette", ""},
	{"toothpaste", "dentifrice", ""},
	{"ice cream", "crème glacée", ""},
	{"pyjamas", "pajamas", ""},
}

// synonym replaces a word of the title by its synonym.
func (g *gen) synonym(r *rappel.Record) (Query, bool) {
	words := titleWords(r.Title(rappel.LangEN))
	title := " " + strings.Join(words, " ") + " "
	for _, s := range synonyms {
		has := strings.Contains(title, " "+s.word+" ")
		if s.field == "vehicle_category" {
			has = strings.EqualFold(r.VehicleCategory, s.word)
		}
		if !has {
			continue
		}
		words, targets, ok := g.intended(r, rappel.LangEN, s.word)
		if !ok {
			return Query{}, false
		}
		typed := slices.Clone(words)
		typed[slices.Index(typed, s.word)] = s.typed
		// Whether the targets' text has the typed words too (the French
		// title of a bilingual record): present in all, some or none.
		found := 0
		for _, id := range g.c.targets(g.c.docs(strings.Join(typed, " "), false, false)) {
			if slices.Contains(targets, id) {
				found++
			}
		}
		variant := "some"
		switch found {
		case 0:
			variant = "absent"
		case len(targets):
			variant = "present"
		}
		return Query{Kind: KindSynonym, Variant: variant, Q: strings.Join(typed, " "), Params: url.Values{}, Targets: targets, Intended: joinWords(words)}, true
	}
	return Query{}, false
}

// stopWords are title words that name nothing: the titles' formula.
var stopWords = map[string]bool{
	"brand": true, "recalled": true, "due": true, "to": true, "of": true, "the": true, "and": true, "a": true,
	"an": true, "for": true, "with": true, "in": true, "on": true, "from": true, "by": true, "or": true,
	"de": true, "du": true, "des": true, "la": true, "le": true, "les": true, "et": true, "en": true, "à": true,
	"au": true, "aux": true, "pour": true, "marque": true, "rappelé": true, "rappelée": true, "rappelés": true,
	"rappelées": true, "raison": true, "un": true, "une": true, "d": true, "l": true, "sur": true, "updated": true,
}

// titleWords returns the words of a title that name something, lower
// case, in order, once each: the first year of a range, "E. coli" as one
// word e.coli, elided articles (l'huile) dropped.
func titleWords(title string) []string {
	var out []string
	fields := strings.Fields(title)
	for i := 0; i < len(fields); i++ {
		w := strings.ToLower(strings.Trim(fields[i], "()[],;:!?«»\"–—"))
		if y, _, ok := strings.Cut(w, "–"); ok && len(y) == 4 {
			w = y
		}
		if j := strings.IndexAny(w, "'’"); j >= 0 {
			_, size := utf8.DecodeRuneInString(w[j:])
			if after := w[j+size:]; after == "s" {
				w = w[:j] // an English possessive: Willow's is willow
			} else if utf8.RuneCountInString(w[:j]) <= 2 || w[:j] == "qu" {
				w = after // a French elision: l'huile is huile
			}
		}
		if w == "e." && i+1 < len(fields) && strings.ToLower(fields[i+1]) == "coli" {
			w = "e.coli"
			i++
		}
		if w == "" || stopWords[w] || len(wordTokens(w)) == 0 || slices.Contains(out, w) {
			continue
		}
		out = append(out, w)
	}
	return out
}

// mergePhrase replaces the words of phrase, where words has them in a
// row, by the phrase as one word.
func mergePhrase(words []string, phrase string) []string {
	parts := strings.Fields(phrase)
	if len(parts) < 2 {
		return words
	}
	for i := 0; i+len(parts) <= len(words); i++ {
		if slices.Equal(words[i:i+len(parts)], parts) {
			return slices.Concat(words[:i], []string{phrase}, words[i+len(parts):])
		}
	}
	return words
}
