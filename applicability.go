package rappel

import (
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Applicability is what a product entry's printed codes say it covers.
type Applicability struct {
	Lots        []string    `json:"lots,omitempty"`         // exact lot codes, as printed (normalized case/space)
	LotPrefixes []string    `json:"lot_prefixes,omitempty"` // "Starting with 0216911"
	BestBefore  []DateRange `json:"best_before,omitempty"`  // dates and ranges (Best Before / BB / Meilleur avant / Exp / use by)
	Models      []string    `json:"models,omitempty"`       // model and catalogue numbers
	Serials     []string    `json:"serials,omitempty"`      // serial numbers and serial ranges as printed
	DINs        []string    `json:"din,omitempty"`          // 8-digit drug identification numbers
	AllCodes    bool        `json:"all_codes,omitempty"`    // "All codes", "All lots.", "Tous les codes", "All codes where milk is not declared"
	Text        string      `json:"codes_text,omitempty"`   // the original printed text, kept as is
	Unread      string      `json:"unread,omitempty"`       // what could not be read, left as text, never guessed ("> 50 Lot Numbers. Contact MFG")
}

// DateRange is an inclusive range of days, YYYY-MM-DD; a single date has
// From == To; a month alone ("04/2027") covers the month. A range open on
// one side ("up to and including 2021-08-13") runs from OpenFrom or to
// OpenTo.
type DateRange struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// OpenFrom and OpenTo stand for the open end of a range that names only
// one: "Best before up to and including …", "on or after …". They are real
// dates, so every DateRange compares as strings.
const (
	OpenFrom = "0001-01-01"
	OpenTo   = "9999-12-31"
)

// How printed dates are read, and how ambiguous ones are resolved.
//
// What the real notices print (../shared/real): CFIA's tables copy the
// package, so one page holds "Best Before 04/2027" (month/year),
// "BB 4/27" (month/two-digit year), "BB: 22-JULY-26" (day-MONTH-year),
// "Best before: JUN/14/2028" (MON/day/year), "ESC-26-238 10/02/27" (three
// two-digit numbers, in a 2026 notice, so not year first) and the
// regulations' year-symbol-day ("BB 2023-SE-09", "2023 DE 15"); drug
// tables print "Expiry: 2029/04/19"; openFDA's code_info is American
// month first ("Best Before: 08/20/15", "Exp 08/16"). No source prints
// three two-digit numbers in one order every time, so:
//
//   - A four-digit year first is year-month-day (2027/04/15, 2027-04-15);
//     last, the other two are day and month when one of them is over 12
//     (15/04/2027), the same date when they are equal, and ambiguous
//     otherwise (05/04/2027).
//   - Three numbers of one or two digits (27/04/15, 10/02/27) are read in
//     every order (year-month-day, day-month-year, month-day-year): a
//     single valid reading is taken, several are ambiguous. A format the
//     notice prints beside them ("YY/MM/DD", "JJ/MM/AA") decides.
//   - A month in letters between two numbers: a four-digit number is the
//     year; with two two-digit numbers, the regulations' two-letter
//     bilingual symbol (JA FE MR AL MA JN JL AU SE OC NO DE) is read
//     year-symbol-day, as the regulations order it, and a month word
//     (JULY, JUIL, NOV) day-month-year, as firms print it ("22-JULY-26").
//     A month in letters first is month-day-year ("JUL. 31, 2015").
//   - Two numbers are a month and its year: 04/2027, 2027-03, and after a
//     date label M/YY (4/27, 08/16): a day and month without a year name
//     no date. A month in letters with one number is a month when the
//     number has four digits (May 2015) and ambiguous otherwise ("JN 22":
//     June 22 or June 2022).
//
// An ambiguous or impossible date is never guessed: its text goes to
// Unread. Two-digit years are 20YY.

// ParseApplicability reads a product entry's printed codes: text is kept
// as Text, what it names is sorted into lots, prefixes, dates, models,
// serial numbers and DINs, and what cannot be read is kept, as printed,
// in Unread. Parts are cut at ";" and line breaks; a code printed without
// saying what it is counts as a lot, and a date without saying which as a
// best-before date (the one date a Canadian package must carry).
// Descriptive parts that select nothing (Harvest location, Grade, PO,
// Packed on, NPN) are read and left out.
func ParseApplicability(text string) Applicability {
	return ParseLabelledCodes([]LabelledCode{{Text: text}})
}

// A LabelledCode is one product code as a notice prints it, with the
// label its table's column or its field gives it ("Model or catalogue
// number", "Lot number", "Part number"), or none when the column says
// nothing of what its codes are ("Code(s)", whose cells carry their own
// labels: "Best Before 04/2027 Lot 60D0924").
type LabelledCode struct {
	Label string
	Text  string
}

// ParseLabelledCodes reads a product's codes as ParseApplicability reads
// their texts joined by "; " (kept as Text), except that in a code whose
// label is one of the printed labels ParseApplicability knows (KnownCodeLabel),
// what no label of its own names is what that label says: "A30034AC" under
// "Model or catalogue number" is a model, not a lot, and "2026-05-07"
// under "Packaging date" selects nothing. The product tables print their
// column's label once, in the header, not before every code; without it a
// model number reads as a lot and rules the product's other lots out.
func ParseLabelledCodes(codes []LabelledCode) Applicability {
	texts := make([]string, 0, len(codes))
	for _, c := range codes {
		texts = append(texts, c.Text)
	}
	a := Applicability{Text: strings.Join(texts, "; ")}
	var unread []string
	for _, c := range codes {
		base, labelled := codeLabel(c.Label)
		for _, seg := range segments(c.Text) {
			unread = append(unread, parseSegment(&a, seg, base, labelled)...)
		}
	}
	a.Lots = dedupe(a.Lots)
	a.LotPrefixes = dedupe(a.LotPrefixes)
	a.Models = dedupe(a.Models)
	a.Serials = dedupe(a.Serials)
	a.DINs = dedupe(a.DINs)
	var ranges []DateRange
	seen := map[DateRange]bool{}
	for _, r := range a.BestBefore {
		if !seen[r] {
			seen[r] = true
			ranges = append(ranges, r)
		}
	}
	a.BestBefore = ranges
	a.Unread = strings.Join(dedupe(unread), "; ")
	return a
}

// segments cuts text at ";", "|" and line breaks, each part trimmed; empty
// parts are left out.
func segments(text string) []string {
	var out []string
	for _, s := range strings.FieldsFunc(text, func(r rune) bool {
		return r == ';' || r == '\n' || r == '\r' || r == '|'
	}) {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Phrases a whole part is read by, folded (FoldKey) and without a final
// period.
var (
	// nonePhrases say the entry prints no code.
	nonePhrases = map[string]bool{
		"none": true, "n/a": true, "na": true, "not applicable": true, "sans objet": true, "s.o": true, "s/o": true,
		"aucun": true, "aucune": true, "-": true, "no market authorization": true, "aucune autorisation de mise en marche": true,
		"no lot": true, "no code": true, "no codes": true,
	}
	// unreadWords mark a part that says more codes exist than it lists,
	// or sends the reader elsewhere for them.
	unreadWords = []string{"contact", "contactez", "more than", "plus de", "see", "voir", "various", "divers", "refer to", "unknown", "inconnu", "multiple"}
	// allWords follow "all" ("tous les", "toutes les") when a part covers
	// every code of the product.
	allWords = map[string]bool{
		"code": true, "codes": true, "lot": true, "lots": true, "units": true, "unit": true, "products": true, "product": true,
		"sizes": true, "models": true, "batches": true, "items": true, "packages": true, "formats": true, "unites": true,
		"produits": true, "modeles": true, "serial": true, "best": true, "dates": true, "varieties": true,
		"flavours": true, "flavors": true, "styles": true, "colours": true, "colors": true, "numbers": true,
	}
)

// KnownCodeLabel reports whether label is one of the printed labels of
// codes ParseLabelledCodes reads a code's kind from: "Lot number",
// "Model or catalogue number", "Serial numbers", "DIN", "Best before",
// "Packaging date", in any case and with or without accents or a "#".
func KnownCodeLabel(label string) bool {
	_, ok := codeLabel(label)
	return ok
}

// codeLabel returns the kind of code a whole label names, and whether it
// names one.
func codeLabel(label string) (codeKind, bool) {
	toks := tokenize(strings.TrimRight(label, ": "))
	if len(toks) == 0 {
		return kindLot, false
	}
	s := scanner{toks: toks}
	n, k := s.labelLen(0)
	if n != len(toks) {
		return kindLot, false
	}
	return k, true
}

// parseSegment reads one part into a and returns what it could not read.
// Its codes that no label of the part names are of kind base, as though
// a label of that kind were printed before them when labelled is set,
// and bare codes (lots unless dates) otherwise.
func parseSegment(a *Applicability, seg string, base codeKind, labelled bool) []string {
	folded := strings.TrimRight(FoldKey(seg), ". ")
	if nonePhrases[folded] {
		return nil
	}
	if strings.HasPrefix(folded, ">") || strings.HasPrefix(folded, "<") {
		return []string{seg}
	}
	words := " " + strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return r
		}
		return ' '
	}, folded) + " "
	for _, w := range unreadWords {
		if strings.Contains(words, " "+w+" ") {
			return []string{seg}
		}
	}
	if allCodesPart(folded) {
		a.AllCodes = true
		return nil
	}
	before := a.read()
	s := scanner{a: a, text: seg, toks: tokenize(seg), hint: dateHint(folded), base: base, baseLabel: labelled}
	s.scan()
	if len(s.unread) > 0 && a.read() == before {
		// Nothing of the part was read: it is unread whole, as printed.
		return []string{seg}
	}
	return s.unread
}

// read counts what a holds that was read from the text.
func (a *Applicability) read() int {
	n := len(a.Lots) + len(a.LotPrefixes) + len(a.BestBefore) + len(a.Models) + len(a.Serials) + len(a.DINs)
	if a.AllCodes {
		n++
	}
	return n
}

// allCodesPart reports whether a folded part says it covers every code:
// "All codes", "All lots.", "Tous les codes", "All codes where milk is not
// declared on the label", "All units sold up to and including …", but not
// "All codes where the first digits are 1234" (a prefix) nor "All Best
// By Dates between … and …" (a range).
func allCodesPart(folded string) bool {
	var rest string
	switch {
	case strings.HasPrefix(folded, "all "):
		rest = folded[len("all "):]
	case strings.HasPrefix(folded, "tous les "):
		rest = folded[len("tous les "):]
	case strings.HasPrefix(folded, "toutes les "):
		rest = folded[len("toutes les "):]
	default:
		return false
	}
	first, _, _ := strings.Cut(rest, " ")
	if !allWords[strings.Trim(first, ".,:")] {
		return false
	}
	for _, w := range []string{"first digit", "starting with", "starts with", "beginning with", "begins with", "commencant par", "debutant par", "between", "entre"} {
		if strings.Contains(rest, w) {
			return false
		}
	}
	return true
}

// A codeToken is one word or punctuation mark of a part, with its place in
// the part's text.
type codeToken struct {
	raw        string // as printed, without a final period
	fold       string // FoldKey of raw
	start, end int    // byte offsets of raw in the part
	punct      bool
}

// tokenize cuts a part into words and punctuation. Commas, colons,
// brackets, quotes, "#", "&", "*" and a dash standing alone are tokens of
// their own; a word keeps its inner "-", "/", "." and "'", loses a final
// period, and "(s)" right after a word joins it ("Lot number(s)").
func tokenize(s string) []codeToken {
	var out []codeToken
	word := -1
	flush := func(end int) {
		if word < 0 {
			return
		}
		w := s[word:end]
		e := end
		for strings.HasSuffix(w, ".") {
			w = w[:len(w)-1]
			e--
		}
		if w != "" {
			out = append(out, codeToken{raw: w, fold: FoldKey(w), start: word, end: e})
		}
		word = -1
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '(' && word >= 0 && i+3 <= len(s) && strings.EqualFold(s[i:i+3], "(s)"):
			i += 3
			continue
		case unicode.IsSpace(r) || r == '\u00a0':
			flush(i)
		case strings.ContainsRune(",:()[]{}\"“”«»#&*+=!?", r) || (r == '-' || r == '–' || r == '—') && word < 0 && (i+size >= len(s) || s[i+size] == ' '):
			flush(i)
			out = append(out, codeToken{raw: string(r), fold: string(r), start: i, end: i + size, punct: true})
		default:
			if word < 0 {
				word = i
			}
		}
		i += size
	}
	flush(len(s))
	for i := range out {
		out[i].fold = strings.ReplaceAll(out[i].fold, "’", "'")
	}
	return out
}

// What a label says the values after it are.
type codeKind int

const (
	kindLot    codeKind = iota // lot, batch, code; also a code printed without a label
	kindDate                   // best before, expiry, use by
	kindModel                  // model, catalogue, part, style, REF
	kindSerial                 // serial numbers and their ranges
	kindDIN                    // drug identification number
	kindPrefix                 // "Starting with": the start of every code
	kindIgnore                 // read, selects nothing: Harvest location, Grade, PO, Packed on, NPN
)

// labels are the printed labels, folded and cut into words, by kind.
var labels = func() map[string]codeKind {
	m := map[string]codeKind{}
	add := func(k codeKind, names ...string) {
		for _, n := range names {
			m[n] = k
		}
	}
	add(kindLot, "lot", "lots", "lot no", "lot nos", "lot number", "lot numbers", "lot code", "lot codes", "lot or serial number",
		"lot or serial numbers", "lot/batch", "batch", "batches", "batch no", "batch number", "batch numbers", "batch code", "code", "codes",
		"product code", "production code", "lot id", "numero de lot", "numeros de lot", "no de lot", "n° de lot", "no. de lot", "lote", "code de lot",
		"software version", "firmware version", "software versions", "version", "versions", "logiciel version", "version du logiciel")
	add(kindDate, "best before", "best before date", "best before dates", "bb", "bbd", "b.b", "bb/ma", "bb/ma date", "best by", "best by date",
		"best by dates", "best if used by", "best if used by date", "use by", "use by date", "use before", "exp", "exp date", "expiry", "expiry date",
		"expiry dates", "expiration", "expiration date", "expiration dates", "expires", "expires on", "expiring", "expire", "exp. date",
		"meilleur avant", "meilleur avant le", "m.a", "date limite d'utilisation", "date de peremption", "peremption", "date d'expiration",
		"expire le", "best-before", "best-before date", "use-by", "bb date", "durable life date", "date limite de conservation", "a consommer avant",
		"utiliser avant", "best before/meilleur avant", "best before / meilleur avant")
	add(kindModel, "model", "models", "model no", "model nos", "model number", "model numbers", "model name", "model names",
		"model or catalogue number", "model or catalog number", "model or catalogue numbers", "model/catalogue number", "catalogue number",
		"catalog number", "catalogue numbers", "catalog numbers", "catalogue no", "catalog no", "cat no", "cat", "catalogue", "catalog", "ref",
		"reference", "reference number", "part number", "part numbers", "part no", "part", "parts", "style number", "style numbers", "style no",
		"style", "item number", "item numbers", "item no", "item", "sku", "article", "article number", "modele", "modeles", "numero de modele",
		"numeros de modele", "no de modele", "numero de catalogue", "numero de piece", "numeros de piece", "numero d'article")
	add(kindSerial, "serial", "serial number", "serial numbers", "serial no", "serial nos", "serials", "s/n", "sn", "numero de serie",
		"numeros de serie", "no de serie", "serie")
	add(kindDIN, "din", "dins", "drug identification number", "din no")
	add(kindPrefix, "starting with", "starts with", "start with", "beginning with", "begins with", "commencant par", "debutant par",
		"commence par", "where the first digits are", "first digits", "the first digits are", "first digits are")
	add(kindIgnore, "po", "p.o", "purchase order", "harvest/process date", "harvest date", "harvest dates", "process date", "processing date",
		"harvest location", "harvest area", "shipping date", "ship date", "shipped", "grade", "packed on", "packaged on", "packed", "pack date",
		"packing date", "packaging date", "production date", "produced on", "manufactured on", "manufacture date", "manufacturing date",
		"date of manufacture", "mfg date", "mfd", "emballe le", "date d'emballage", "date de production", "date de fabrication", "fabrique le",
		"npn", "upc", "cup", "size", "format", "harvested on", "establishment", "etablissement", "manufactured", "manufactured during",
		"manufactured between", "produced", "produced between", "produced during", "fabrique", "sold on", "sold between", "vendu le")
	return m
}()

// maxLabelWords is the most words a label has.
const maxLabelWords = 6

// fillers are words that join values or decorate labels and mean nothing
// by themselves.
var fillers = map[string]bool{
	"and": true, "et": true, "or": true, "ou": true, "&": true, ",": true, ":": true, "#": true, "(": true, ")": true,
	"[": true, "]": true, "{": true, "}": true, "\"": true, "“": true, "”": true, "«": true, "»": true, "*": true, "+": true,
	"=": true, "!": true, "?": true, "of": true, "the": true, "with": true, "all": true, "no": true, "no.": true, "nos": true, "number": true,
	"numbers": true, "n°": true, "is": true, "are": true, "le": true, "la": true, "les": true, "du": true, "des": true, "de": true, "#:": true,
	"an": true, "-": true, "–": true, "—": true, "/": true, "on": true,
}

// scanner reads the tokens of one part, left to right.
type scanner struct {
	a     *Applicability
	text  string
	toks  []codeToken
	hint  []dateOrder // the date order the part prints, if it does
	kind  codeKind
	label bool // a label set kind, rather than none (a bare code)
	// base and baseLabel are the kind and label the part's codes have
	// where no label of its own names them: its column's (kindLot and
	// none for a bare code).
	base      codeKind
	baseLabel bool
	labelAt   int         // where the last label started, -1 once a value followed it
	prose     bool        // the part holds words that are no code: a bare code in it is prose too
	codes     []codeToken // adjacent code words not yet filed
	unread    []string    // what could not be read
	// proseFrom and proseTo bound the prose not yet filed, proseFrom -1
	// when none.
	proseFrom, proseTo int
}

// scan reads the part's tokens into a.
func (s *scanner) scan() {
	s.labelAt, s.proseFrom = -1, -1
	s.kind, s.label = s.base, s.baseLabel
	s.prose = s.holdsProse()
	for i := 0; i < len(s.toks); {
		if n, k := s.labelLen(i); n > 0 {
			s.flushRun()
			s.flushProse()
			s.kind, s.label, s.labelAt = k, true, s.toks[i].start
			i += n
			continue
		}
		if n := s.dateAt(i); n > 0 {
			i += n
			continue
		}
		t := s.toks[i]
		if isDateHint(t.fold) {
			i++
			continue
		}
		if n := allCodesAt(s.toks, i); n > 0 {
			// "Cromolyn Eye Drops 10 mL (DIN 02009277) – all lots"
			s.flushRun()
			s.a.AllCodes = true
			i += n
			continue
		}
		if isRangeWord(t.fold) && len(s.codes) == 1 && i+1 < len(s.toks) && isCodeWord(s.toks[i+1]) && hasDigit(s.toks[i+1].raw) &&
			(s.kind == kindSerial || s.kind == kindLot && !(s.prose && !s.label)) {
			s.codeRange(i)
			i += 2
			continue
		}
		if t.punct || fillers[t.fold] {
			s.flushRun()
			if t.raw == ")" || t.raw == "(" {
				s.kind, s.label = s.base, s.baseLabel
			}
			i++
			continue
		}
		switch {
		case s.kind == kindIgnore:
		case isCodeWord(t) && !isRangeWord(t.fold) && (s.label || !s.prose):
			s.flushProse()
			s.codes = append(s.codes, t)
		default:
			s.flushRun()
			s.prosey(t)
			if s.label {
				s.kind, s.label = s.base, s.baseLabel
			}
		}
		i++
	}
	s.flushRun()
	s.flushProse()
}

// holdsProse reports whether the part holds a word that is no label,
// joining word, month or code: then it is a sentence ("Jamp-Atorvastatin
// 40 mg tablets (lot MHC1403A, expiry 2023-09-30)"), whose numbers are
// codes only where a label says so.
func (s *scanner) holdsProse() bool {
	for i := 0; i < len(s.toks); i++ {
		if n, k := s.labelLen(i); n > 0 {
			i += n - 1
			if k == kindIgnore {
				// What an ignored label's value says is no prose.
				for i+1 < len(s.toks) && s.toks[i+1].raw != "(" && s.toks[i+1].raw != ")" {
					if m, _ := s.labelLen(i + 1); m > 0 {
						break
					}
					i++
				}
			}
			continue
		}
		t := s.toks[i]
		if t.punct || fillers[t.fold] || isRangeWord(t.fold) || isDateHint(t.fold) || isCodeWord(t) {
			continue
		}
		if _, month := months[t.fold]; month {
			continue
		}
		if n, _ := openerAt(s.toks, i); n > 0 {
			i += n - 1
			continue
		}
		return true
	}
	return false
}

// prosey notes a word that is no code: prose, kept in Unread.
func (s *scanner) prosey(t codeToken) {
	s.prose = true
	if s.proseFrom < 0 {
		s.proseFrom = t.start
	}
	s.proseTo = t.end
}

// flushProse files the prose words not yet filed as one unread piece.
func (s *scanner) flushProse() {
	if s.proseFrom >= 0 {
		s.addUnread(s.proseFrom, s.proseTo)
	}
	s.proseFrom = -1
}

// addUnread keeps the part's text from start to end as unread.
func (s *scanner) addUnread(start, end int) {
	if t := strings.Trim(s.text[start:end], " ,:"); t != "" {
		s.unread = append(s.unread, t)
	}
}

// labelLen returns the number of tokens of the longest label at i, and
// its kind; 0 when none starts there.
func (s *scanner) labelLen(i int) (int, codeKind) {
	best, kind := 0, kindLot
	var words []string
	for j := i; j < len(s.toks) && j-i < maxLabelWords; j++ {
		if s.toks[j].punct && s.toks[j].raw != "#" {
			break
		}
		if s.toks[j].raw == "#" {
			if best == j-i && best > 0 {
				best++ // "Lot #", "Model #"
			}
			continue
		}
		words = append(words, s.toks[j].fold)
		if k, ok := labels[strings.Join(words, " ")]; ok {
			best, kind = j-i+1, k
		}
	}
	return best, kind
}

// isCodeWord reports whether a word can be (part of) a code: it holds a
// digit, or has no lower-case letter ("KHK" of "KHK 190026-001").
func isCodeWord(t codeToken) bool {
	if t.punct {
		return false
	}
	if hasDigit(t.raw) {
		return true
	}
	letters := 0
	for _, r := range t.raw {
		if unicode.IsLower(r) {
			return false
		}
		if unicode.IsLetter(r) {
			letters++
		}
	}
	return letters > 0
}

func hasDigit(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return '0' <= r && r <= '9' }) >= 0
}

// isRangeWord reports whether a word joins the two ends of a range.
func isRangeWord(f string) bool {
	switch f {
	case "to", "through", "thru", "-", "–", "—", "au", "a", "à", "till", "until":
		return true
	}
	return false
}

// flushRun files the adjacent code words read since the last separator
// by the current kind. Words of one shape ("18024 18037") are as many
// codes; words of different shapes ("KHK 190026-001", "AGRT 2889") one
// code. Words without a digit, or a bare code inside prose, are unread.
func (s *scanner) flushRun() {
	run := s.codes
	s.codes = nil
	if len(run) == 0 {
		return
	}
	digit := false
	for _, t := range run {
		digit = digit || hasDigit(t.raw)
	}
	if !digit || (!s.label && s.prose) {
		s.proseFrom = min(nonNeg(s.proseFrom, run[0].start), run[0].start)
		s.proseTo = max(s.proseTo, run[len(run)-1].end)
		s.prose = true
		return
	}
	var codes []string
	switch {
	case len(run) > 1 && sameShape(run):
		for _, t := range run {
			codes = append(codes, t.raw)
		}
	case len(run) <= 2 || allDigits(run):
		codes = []string{s.text[run[0].start:run[len(run)-1].end]}
	default:
		// Three words or more of different shapes are words, not a code:
		// "VORTEX 10 MIXED BERRY JELLY DROPS".
		s.proseFrom = min(nonNeg(s.proseFrom, run[0].start), run[0].start)
		s.proseTo = max(s.proseTo, run[len(run)-1].end)
		s.prose = true
		return
	}
	s.labelAt = -1
	for _, c := range codes {
		c = strings.Join(strings.Fields(c), " ")
		switch s.kind {
		case kindLot:
			s.a.Lots = append(s.a.Lots, strings.ToUpper(c))
		case kindDate:
			// A code after a date label that is no date: the lot the
			// date belongs to ("Lot F0067 exp. 06/14, F0079 exp. 04/15").
			s.a.Lots = append(s.a.Lots, strings.ToUpper(c))
		case kindModel:
			s.a.Models = append(s.a.Models, c)
		case kindSerial:
			s.a.Serials = append(s.a.Serials, c)
		case kindPrefix:
			s.a.LotPrefixes = append(s.a.LotPrefixes, strings.ToUpper(strings.ReplaceAll(c, " ", "")))
		case kindDIN:
			if d := strings.ReplaceAll(c, " ", ""); len(d) == 8 && IsDigits(d) {
				s.a.DINs = append(s.a.DINs, d)
			} else {
				s.unread = append(s.unread, "DIN "+c)
			}
		}
	}
}

// allDigits reports whether every word of a run is digits: a number
// printed in groups ("0 62243 10402 1").
func allDigits(run []codeToken) bool {
	for _, t := range run {
		if !IsDigits(t.raw) {
			return false
		}
	}
	return true
}

// allCodesAt returns the tokens of "all lots" (all codes, tous les lots,
// …) at i when it ends the part or a clause, 0 otherwise.
func allCodesAt(toks []codeToken, i int) int {
	j := i
	switch {
	case toks[j].fold == "all":
		j++
	case (toks[j].fold == "tous" || toks[j].fold == "toutes") && j+1 < len(toks) && toks[j+1].fold == "les":
		j += 2
	default:
		return 0
	}
	if j >= len(toks) || !allWords[toks[j].fold] {
		return 0
	}
	j++
	if j < len(toks) && toks[j].fold != "," && toks[j].fold != ")" {
		return 0
	}
	return j - i
}

func nonNeg(v, or int) int {
	if v < 0 {
		return or
	}
	return v
}

// codeRange files "A to B" (the one code word read, the range word at i,
// the word after it): a range of serial numbers as printed; a range of
// lots, which has no place of its own, as unread.
func (s *scanner) codeRange(i int) {
	from, to := s.codes[0], s.toks[i+1]
	s.codes = nil
	s.labelAt = -1
	if s.kind == kindSerial {
		s.a.Serials = append(s.a.Serials, strings.Join(strings.Fields(s.text[from.start:to.end]), " "))
		return
	}
	s.addUnread(from.start, to.end)
}

// sameShape reports whether words have one shape: the same length, with
// letters and digits at the same places.
func sameShape(run []codeToken) bool {
	shape := func(w string) string {
		return strings.Map(func(r rune) rune {
			switch {
			case unicode.IsDigit(r):
				return '9'
			case unicode.IsLetter(r):
				return 'A'
			}
			return r
		}, w)
	}
	first := shape(run[0].raw)
	for _, t := range run[1:] {
		if shape(t.raw) != first {
			return false
		}
	}
	return true
}

// A dateOrder is the order of a numeric date's day, month and year.
type dateOrder int

const (
	orderYMD dateOrder = iota
	orderDMY
	orderMDY
)

// dateHints are the printed formats that say a part's date order, folded,
// their separators removed.
var dateHints = map[string]dateOrder{
	"yymmdd": orderYMD, "yyyymmdd": orderYMD, "aammjj": orderYMD, "aaaammjj": orderYMD,
	"ddmmyy": orderDMY, "ddmmyyyy": orderDMY, "jjmmaa": orderDMY, "jjmmaaaa": orderDMY,
	"mmddyy": orderMDY, "mmddyyyy": orderMDY,
}

// isDateHint reports whether a folded word is a date format ("YY/MM/DD").
func isDateHint(f string) bool {
	_, ok := dateHints[strings.Map(dropSeparator, f)]
	return ok
}

func dropSeparator(r rune) rune {
	if r == '/' || r == '-' || r == '.' || r == ' ' {
		return -1
	}
	return r
}

// dateHint returns the date order a folded part prints, if one.
func dateHint(folded string) []dateOrder {
	var out []dateOrder
	for _, w := range strings.FieldsFunc(folded, func(r rune) bool { return r == ' ' || r == '(' || r == ')' || r == ':' || r == ',' }) {
		if o, ok := dateHints[strings.Map(dropSeparator, w)]; ok {
			out = append(out, o)
		}
	}
	return out
}

// months are the month names and abbreviations, English and French,
// folded, and the two-letter bilingual symbols of the regulations.
var months = func() map[string]int {
	m := map[string]int{}
	for i, names := range [][]string{
		{"jan", "january", "janv", "janvier"},
		{"feb", "february", "fev", "fevr", "fevrier"},
		{"mar", "march", "mars"},
		{"apr", "april", "avr", "avril"},
		{"may", "mai"},
		{"jun", "june", "juin"},
		{"jul", "july", "juil", "juillet"},
		{"aug", "august", "aou", "aout"},
		{"sep", "sept", "september", "septembre"},
		{"oct", "october", "octobre"},
		{"nov", "november", "novembre"},
		{"dec", "december", "decembre"},
	} {
		for _, n := range names {
			m[n] = i + 1
		}
	}
	return m
}()

// monthSymbols are the bilingual two-letter months of Canadian
// best-before dates.
var monthSymbols = map[string]int{"ja": 1, "fe": 2, "mr": 3, "al": 4, "ma": 5, "jn": 6, "jl": 7, "au": 8, "se": 9, "oc": 10, "no": 11, "de": 12}

// A datePart is one number or month of a printed date.
type datePart struct {
	n      int // the number, or the month for a word
	digits int // the number's digits; 0 for a month word
	symbol bool
}

func (p datePart) isMonth() bool { return p.digits == 0 }

// Results of reading a date.
type dateStatus int

const (
	notDate    dateStatus = iota // no date there
	dateRead                     // read, one reading
	dateUnsure                   // a date, but ambiguous or impossible: unread
	dateNone                     // the form of a date, but no reading is a real day
)

// dateAt reads a date, or a range of dates, at token i, files it and
// returns the tokens it took; 0 when no date starts at i. In a part whose
// label is not a date's, only forms no code takes are dates.
func (s *scanner) dateAt(i int) int {
	j := i
	open := ""
	if n, o := openerAt(s.toks, j); n > 0 {
		j += n
		open = o
	}
	first, n1, st := s.readDate(j)
	if st == notDate {
		return 0
	}
	if s.kind == kindIgnore {
		return j + n1 - i // a harvest or packing date: read, and left out
	}
	if !s.label && s.prose {
		// A date in a sentence without a label ("mattresses (2021-04-13)"):
		// the notice's date as often as the package's, so prose.
		s.flushRun()
		for k := i; k < j+n1; k++ {
			s.prosey(s.toks[k])
		}
		return j + n1 - i
	}
	s.flushRun()
	s.flushProse()
	start := s.toks[i].start
	if s.labelAt >= 0 && s.label && s.kind == kindDate {
		start = s.labelAt
	}
	j += n1
	end := s.toks[j-1].end
	r := first
	if st == dateRead {
		switch open {
		case "upto":
			r = DateRange{OpenFrom, first.To}
		case "before":
			r = DateRange{OpenFrom, addDays(first.From, -1)}
		case "since":
			r = DateRange{first.From, OpenTo}
		case "after":
			r = DateRange{addDays(first.To, 1), OpenTo}
		}
	}
	if (open == "" || open == "between") && j+1 < len(s.toks) && (isRangeWord(s.toks[j].fold) || open == "between" && (s.toks[j].fold == "and" || s.toks[j].fold == "et")) {
		if second, n2, st2 := s.readDate(j + 1); st2 != notDate {
			j += 1 + n2
			end = s.toks[j-1].end
			if st == dateRead && st2 == dateRead && first.From <= second.To {
				r = DateRange{first.From, second.To}
			} else {
				st = dateUnsure
			}
		}
	}
	if st == dateRead {
		s.a.BestBefore = append(s.a.BestBefore, r)
	} else {
		s.addUnread(start, end)
	}
	s.labelAt = -1
	if s.kind != kindDate && s.label {
		s.kind, s.label = s.base, s.baseLabel
	}
	return j - i
}

// openerAt reads the words that open a range at i: "between", "from",
// "up to and including", "on or before", "before", "on or after",
// "after", "since" and their French. It returns the tokens taken and what
// they open.
func openerAt(toks []codeToken, i int) (int, string) {
	for _, o := range []struct {
		words string
		open  string
	}{
		{"up to and including", "upto"}, {"up to", "upto"}, {"on or before", "upto"}, {"until", "upto"}, {"jusqu'au", "upto"},
		{"jusqu'a", "upto"}, {"au plus tard le", "upto"}, {"prior to", "before"}, {"before", "before"}, {"avant le", "before"},
		{"on or after", "since"}, {"since", "since"}, {"a partir du", "since"}, {"after", "after"}, {"apres le", "after"},
		{"between", "between"}, {"from", "between"}, {"entre", "between"}, {"du", "between"},
	} {
		words := strings.Fields(o.words)
		if i+len(words) > len(toks) {
			continue
		}
		ok := true
		for k, w := range words {
			ok = ok && toks[i+k].fold == w
		}
		if ok {
			return len(words), o.open
		}
	}
	return 0, ""
}

// readDate reads one date at token i: one word ("2027-04-15",
// "22-JULY-26", "04/2027") or two or three ("JUL. 31, 2015", "30 décembre
// 2011", "2023 DE 15", "May 2015"). It returns the day or month read, the
// tokens taken and how it went.
func (s *scanner) readDate(i int) (DateRange, int, dateStatus) {
	if i >= len(s.toks) || s.toks[i].punct {
		return DateRange{}, 0, notDate
	}
	dateLabel := s.kind == kindDate
	// One word cut at its separators.
	if parts, sep, ok := wordDateParts(s.toks[i].raw, dateLabel); ok && s.wordIsDate(parts, sep, dateLabel) {
		r, st := resolveDate(parts, dateLabel, s.hint)
		return r, 1, s.status(st, dateLabel)
	}
	// Several words: numbers and at most one month, a comma allowed
	// before a four-digit year.
	var parts []datePart
	j := i
	for j < len(s.toks) && len(parts) < 3 {
		t := s.toks[j]
		if t.raw == "," && len(parts) > 0 && j+1 < len(s.toks) && len(s.toks[j+1].raw) == 4 && IsDigits(s.toks[j+1].raw) {
			j++
			continue
		}
		p, ok := wordPart(t.raw, len(parts) > 0 || dateLabel)
		if !ok {
			break
		}
		parts = append(parts, p)
		j++
	}
	if len(parts) < 2 || !s.wordsAreDate(parts, dateLabel) {
		return DateRange{}, 0, notDate
	}
	r, st := resolveDate(parts, dateLabel, s.hint)
	return r, j - i, s.status(st, dateLabel)
}

// status is what a date's reading means here: without a date label, a
// form no reading makes a real day of is a code ("3528-4828-2601"); after
// one, it is unread like an ambiguous date.
func (s *scanner) status(st dateStatus, dateLabel bool) dateStatus {
	switch {
	case st == dateNone && dateLabel:
		return dateUnsure
	case st == dateNone:
		return notDate
	}
	return st
}

// wordDateParts cuts a word at "/", "-" or "." into numbers and months,
// or, after a date label, a word like "15NOV2018" at its changes from
// digits to letters. ok is false when a piece is neither.
func wordDateParts(w string, dateLabel bool) ([]datePart, rune, bool) {
	sep := rune(0)
	for _, r := range w {
		if r == '/' || r == '-' || r == '.' {
			if sep != 0 && r != sep {
				return nil, 0, false
			}
			sep = r
		}
	}
	var pieces []string
	if sep != 0 {
		pieces = strings.Split(w, string(sep))
	} else if dateLabel {
		pieces = splitDigitsLetters(w)
	}
	if len(pieces) < 2 || len(pieces) > 3 {
		return nil, 0, false
	}
	var parts []datePart
	for _, p := range pieces {
		dp, ok := wordPart(p, true)
		if !ok {
			return nil, 0, false
		}
		parts = append(parts, dp)
	}
	return parts, sep, true
}

// splitDigitsLetters cuts "15NOV2018" into "15", "NOV", "2018".
func splitDigitsLetters(w string) []string {
	var out []string
	start := 0
	for i := 1; i <= len(w); i++ {
		if i == len(w) || isASCIIDigit(w[i]) != isASCIIDigit(w[i-1]) {
			out = append(out, w[start:i])
			start = i
		}
	}
	return out
}

func isASCIIDigit(b byte) bool { return '0' <= b && b <= '9' }

// wordPart reads one piece of a date: a number of one, two or four
// digits, a month word, or (symbols true) a two-letter month symbol.
func wordPart(w string, symbols bool) (datePart, bool) {
	if IsDigits(w) {
		if len(w) == 1 || len(w) == 2 || len(w) == 4 {
			n, _ := strconv.Atoi(w)
			return datePart{n: n, digits: len(w)}, true
		}
		return datePart{}, false
	}
	f := FoldKey(w)
	if m, ok := months[f]; ok {
		return datePart{n: m}, true
	}
	if m, ok := monthSymbols[f]; ok && symbols && w == strings.ToUpper(w) {
		return datePart{n: m, symbol: true}, true
	}
	return datePart{}, false
}

// wordIsDate says whether one word, cut into parts, is a date here.
// After a date label any date form is; elsewhere a code may look like
// one ("4-281-25", "26-238"), so only a slashed date of three parts or a
// four-digit year, an ISO date, or a date holding a month word is.
func (s *scanner) wordIsDate(parts []datePart, sep rune, dateLabel bool) bool {
	if dateLabel {
		return true
	}
	month, year4 := false, false
	for _, p := range parts {
		month = month || p.isMonth() && !p.symbol
		year4 = year4 || p.digits == 4
	}
	switch {
	case month:
		return len(parts) == 3 || year4
	case sep == '/' && s.kind != kindModel && s.kind != kindSerial:
		return len(parts) == 3 || year4
	case sep == '-' && len(parts) == 3 && parts[0].digits == 4 && s.kind == kindLot && !s.label:
		return true // 2026-05-07
	case sep == '-' && len(parts) == 3 && parts[0].digits == 4 && parts[1].symbol:
		return true // 2023-SE-09
	}
	return false
}

// wordsAreDate says whether several words are a date here: after a date
// label, any two or three numbers and months; elsewhere only with a month
// in letters and a four-digit year ("August 13, 2021", "2023 DE 15").
func (s *scanner) wordsAreDate(parts []datePart, dateLabel bool) bool {
	months, year4 := 0, false
	for _, p := range parts {
		if p.isMonth() {
			months++
		}
		year4 = year4 || p.digits == 4
	}
	if months > 1 {
		return false
	}
	if dateLabel {
		return true
	}
	return months == 1 && year4 && (len(parts) == 3 || !parts[0].symbol && !parts[len(parts)-1].symbol)
}

// resolveDate turns a date's parts into the day or month they name, by
// the rules at the top of this file. dateLabel allows two numbers of two
// digits (M/YY); hint is the order the part prints, if any.
func resolveDate(parts []datePart, dateLabel bool, hint []dateOrder) (DateRange, dateStatus) {
	year := func(p datePart) (int, bool) {
		switch p.digits {
		case 4:
			return p.n, p.n >= 1900 && p.n <= 2199
		case 1, 2:
			return 2000 + p.n, true
		}
		return 0, false
	}
	numbers := 0
	monthAt := -1
	for i, p := range parts {
		if p.isMonth() {
			monthAt = i
		} else {
			numbers++
		}
	}
	switch {
	case len(parts) == 2 && monthAt >= 0:
		// A month and one number: its year when it has four digits.
		n := parts[1-monthAt]
		if n.digits == 4 {
			return monthRange(n.n, parts[monthAt].n)
		}
		if n.n > 31 {
			return monthRange(2000+n.n, parts[monthAt].n)
		}
		return DateRange{}, dateUnsure
	case len(parts) == 2:
		a, b := parts[0], parts[1]
		switch {
		case b.digits == 4 && a.digits <= 2:
			return monthRange(b.n, a.n)
		case a.digits == 4 && b.digits <= 2:
			return monthRange(a.n, b.n)
		case dateLabel && a.digits <= 2 && b.digits <= 2 && a.n >= 1 && a.n <= 12:
			return monthRange(2000+b.n, a.n)
		}
		return DateRange{}, dateUnsure
	case len(parts) == 3 && monthAt == 1:
		a, m, b := parts[0], parts[1], parts[2]
		switch {
		case a.digits == 4:
			return dayRange(a.n, m.n, b.n)
		case b.digits == 4:
			return dayRange(b.n, m.n, a.n)
		case m.symbol:
			y, _ := year(a)
			return dayRange(y, m.n, b.n)
		default:
			y, _ := year(b)
			return dayRange(y, m.n, a.n)
		}
	case len(parts) == 3 && monthAt == 0:
		d, y := parts[1], parts[2]
		if d.digits == 4 {
			return DateRange{}, dateUnsure
		}
		yy, ok := year(y)
		if !ok {
			return DateRange{}, dateUnsure
		}
		return dayRange(yy, parts[0].n, d.n)
	case len(parts) == 3 && numbers == 3:
		a, b, c := parts[0], parts[1], parts[2]
		switch {
		case a.digits == 4:
			return dayRange(a.n, b.n, c.n)
		case c.digits == 4:
			if len(hint) > 0 && (hint[0] == orderDMY || hint[0] == orderMDY) {
				if hint[0] == orderDMY {
					return dayRange(c.n, b.n, a.n)
				}
				return dayRange(c.n, a.n, b.n)
			}
			dmy, ok1 := validDay(c.n, b.n, a.n)
			mdy, ok2 := validDay(c.n, a.n, b.n)
			switch {
			case ok1 && ok2 && dmy == mdy, ok1 && !ok2:
				return DateRange{dmy, dmy}, dateRead
			case ok2 && !ok1:
				return DateRange{mdy, mdy}, dateRead
			case !ok1 && !ok2:
				return DateRange{}, dateNone
			}
			return DateRange{}, dateUnsure
		case b.digits == 4:
			return DateRange{}, dateUnsure
		}
		if len(hint) > 0 {
			switch hint[0] {
			case orderYMD:
				return dayRange(2000+a.n, b.n, c.n)
			case orderDMY:
				return dayRange(2000+c.n, b.n, a.n)
			default:
				return dayRange(2000+c.n, a.n, b.n)
			}
		}
		var found []string
		for _, o := range [][3]int{{a.n, b.n, c.n}, {c.n, b.n, a.n}, {c.n, a.n, b.n}} {
			if d, ok := validDay(2000+o[0], o[1], o[2]); ok && !containsString(found, d) {
				found = append(found, d)
			}
		}
		switch len(found) {
		case 0:
			return DateRange{}, dateNone
		case 1:
			return DateRange{found[0], found[0]}, dateRead
		}
		return DateRange{}, dateUnsure
	}
	return DateRange{}, dateUnsure
}

// validDay returns y-m-d as YYYY-MM-DD when it is a real day.
func validDay(y, m, d int) (string, bool) {
	if y < 1900 || y > 2199 || m < 1 || m > 12 || d < 1 || d > 31 {
		return "", false
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d {
		return "", false
	}
	return t.Format(time.DateOnly), true
}

func dayRange(y, m, d int) (DateRange, dateStatus) {
	s, ok := validDay(y, m, d)
	if !ok {
		return DateRange{}, dateNone
	}
	return DateRange{s, s}, dateRead
}

func monthRange(y, m int) (DateRange, dateStatus) {
	from, ok := validDay(y, m, 1)
	if !ok {
		return DateRange{}, dateNone
	}
	t, _ := time.Parse(time.DateOnly, from)
	return DateRange{from, t.AddDate(0, 1, -1).Format(time.DateOnly)}, dateRead
}

// addDays moves a YYYY-MM-DD day by n days; an open end stays open.
func addDays(day string, n int) string {
	t, err := time.Parse(time.DateOnly, day)
	if err != nil || day == OpenFrom || day == OpenTo {
		return day
	}
	return t.AddDate(0, 0, n).Format(time.DateOnly)
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// dedupe drops repeated and empty values, keeping the first of each; nil
// stays nil.
func dedupe(list []string) []string {
	var out []string
	seen := make(map[string]bool, len(list))
	for _, s := range list {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// Covers says whether an item with this lot and/or date (YYYY-MM-DD or
// any printed form ParseApplicability reads) is covered: decided=false
// when the codes cannot decide it (no lot given where lots are listed,
// unread text, ...); why is one sentence.
//
// Each kind the codes list and the item gives is compared: the lot with
// the lots, prefixes and serial numbers (letters and digits only, any
// case), the date with the best-before dates. All that is compared
// agreeing covers the item; all of it disagreeing does not, unless
// something could not be read, which might have listed the item, or the
// codes list lots and only a date was given (a date printed without a
// label may be a packing date). One agreeing and another not (lot
// listed, date not) is left undecided: a notice's lots and dates pair up
// ("ESC-26-238 10/02/27; ESC-26-238 11/02/27"), and the pairs are not
// kept. A lot equal to a listed model number or DIN covers the item when
// the codes list no lots.
func (a Applicability) Covers(lot, date string) (covered, decided bool, why string) {
	if a.AllCodes {
		if part := a.allCodesText(); part != "" {
			return true, true, "The notice covers every code of this product: " + Quote(part) + "."
		}
		return true, true, "The notice covers every code of this product."
	}
	item, ok := itemDate(date)
	if !ok {
		return false, false, "The date " + Quote(date) + " could not be read as one day or month; give it as YYYY-MM-DD."
	}
	lot = strings.TrimSpace(lot)
	if lot == "" && date == "" {
		return false, false, "Give the lot or the best-before date printed on the product to check it against the notice's codes."
	}
	units := len(a.Lots) + len(a.LotPrefixes) + len(a.Serials)
	lotMatch, lotMiss := false, false
	if lot != "" && units > 0 {
		lotMatch = a.lotListed(lot)
		lotMiss = !lotMatch
	}
	idMatch := lot != "" && units == 0 && a.idListed(lot)
	dateMatch, dateMiss, datePartial := false, false, false
	if date != "" && len(a.BestBefore) > 0 {
		for _, r := range a.BestBefore {
			switch {
			case r.From <= item.From && item.To <= r.To:
				dateMatch = true
			case item.From <= r.To && r.From <= item.To:
				datePartial = true
			}
		}
		datePartial = datePartial && !dateMatch
		dateMiss = !dateMatch && !datePartial
	}
	matched := lotMatch || idMatch || dateMatch
	missed := lotMiss || dateMiss
	switch {
	case dateMiss && !matched && units > 0 && lot == "":
		return false, false, "The date " + Quote(date) + " is not among the best-before dates the notice lists, but it lists lots too (" + QuoteList(a.unitCodes(), "and") + "); give the lot printed on the product."
	case matched && missed && lotMatch:
		return false, false, "Lot " + Quote(lot) + " is listed, but not the date " + Quote(date) + " (" + rangesText(a.BestBefore) + "); check both on the package."
	case matched && missed:
		return false, false, "The date " + Quote(date) + " is listed, but not lot " + Quote(lot) + "; check both on the package."
	case lotMatch:
		return true, true, "Lot " + Quote(lot) + " is among the codes the notice lists."
	case idMatch:
		return true, true, Quote(lot) + " is a model or drug number the notice lists, without lots."
	case dateMatch:
		return true, true, "The date " + Quote(date) + " is among the best-before dates the notice lists (" + rangesText(a.BestBefore) + ")."
	case missed && a.Unread != "":
		return false, false, "The item is not among the codes read, but the notice also prints " + Quote(a.Unread) + ", which could not be read."
	case lotMiss:
		return false, true, "Lot " + Quote(lot) + " is not among the codes the notice lists (" + QuoteList(a.unitCodes(), "and") + ")."
	case dateMiss:
		return false, true, "The date " + Quote(date) + " is not among the best-before dates the notice lists (" + rangesText(a.BestBefore) + ")."
	case datePartial:
		return false, false, "The date " + Quote(date) + " spans days the notice lists and days it does not; give the day."
	case units > 0 && lot == "":
		return false, false, "The notice lists lots (" + QuoteList(a.unitCodes(), "and") + "); give the lot printed on the product."
	case len(a.BestBefore) > 0 && date == "":
		return false, false, "The notice lists best-before dates (" + rangesText(a.BestBefore) + "); give the date printed on the product."
	case len(a.Models)+len(a.DINs) > 0:
		return false, false, "The notice names the product by model or drug number (" + QuoteList(append(append([]string(nil), a.Models...), a.DINs...), "and") + "), not by lot or date: every unit of it is covered; compare that number on the product."
	case a.Unread != "":
		return false, false, "The notice's codes could not be read: " + Quote(a.Unread) + "."
	case a.Text == "":
		return false, false, "The notice prints no codes for this product to check against."
	}
	return false, false, "The notice's codes " + Quote(a.Text) + " name no lot, serial number or date to check against."
}

// itemDate reads the date Covers is given: "" is none (ok), YYYY-MM-DD a
// day, and any printed form ParseApplicability reads after a best-before
// label ("04/2027", "22-JULY-26") its day or month; anything else, or an
// ambiguous form, is not ok.
func itemDate(date string) (DateRange, bool) {
	date = strings.TrimSpace(date)
	switch {
	case date == "":
		return DateRange{}, true
	case ValidDate(date):
		return DateRange{date, date}, true
	}
	s := scanner{a: &Applicability{}, text: date, toks: tokenize(date), hint: dateHint(FoldKey(date)), kind: kindDate, label: true, labelAt: -1, proseFrom: -1}
	r, n, st := s.readDate(0)
	if st != dateRead || n != len(s.toks) {
		return DateRange{}, false
	}
	return r, true
}

// codeKey is a code as codes are compared: letters and digits only, in
// upper case, so "ESC-26-238", "esc 26 238" and "ESC26238" are one code.
func codeKey(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case unicode.IsDigit(r):
			return r
		case unicode.IsLetter(r):
			return unicode.ToUpper(r)
		}
		return -1
	}, foldFrench.Replace(strings.ToLower(s)))
}

// lotListed reports whether lot is a listed lot, starts with a listed
// prefix, or is a listed serial number or inside a listed serial range.
func (a Applicability) lotListed(lot string) bool {
	k := codeKey(lot)
	if k == "" {
		return false
	}
	for _, l := range a.Lots {
		if codeKey(l) == k {
			return true
		}
	}
	for _, p := range a.LotPrefixes {
		if pk := codeKey(p); pk != "" && strings.HasPrefix(k, pk) {
			return true
		}
	}
	for _, s := range a.Serials {
		if codeKey(s) == k || inSerialRange(s, k) {
			return true
		}
	}
	return false
}

// idListed reports whether code is a listed model number or DIN.
func (a Applicability) idListed(code string) bool {
	k := codeKey(code)
	for _, id := range append(append([]string(nil), a.Models...), a.DINs...) {
		if k != "" && codeKey(id) == k {
			return true
		}
	}
	return false
}

// inSerialRange reports whether the code key k lies in a printed serial
// range ("1000 to 1999", "SN100-SN199"): the same letters before the
// digits, and the digits between the ends'.
func inSerialRange(printed, k string) bool {
	from, to, ok := "", "", false
	f := FoldKey(printed)
	for _, sep := range []string{" to ", " through ", " thru ", " - ", " – ", " au ", " a ", " à "} {
		if x, y, cut := strings.Cut(f, sep); cut {
			from, to, ok = x, y, true
			break
		}
	}
	if !ok {
		if x, y, cut := strings.Cut(f, "-"); cut && IsDigits(x) && IsDigits(y) && len(x) == len(y) {
			from, to, ok = x, y, true
		}
	}
	if !ok {
		return false
	}
	split := func(s string) (string, string) {
		s = codeKey(s)
		i := len(s)
		for i > 0 && isASCIIDigit(s[i-1]) {
			i--
		}
		return s[:i], s[i:]
	}
	fp, fd := split(from)
	tp, td := split(to)
	kp, kd := split(k)
	if fp != tp || kp != fp || fd == "" || td == "" || kd == "" || len(kd) > 18 || len(fd) > 18 || len(td) > 18 {
		return false
	}
	n, _ := strconv.ParseUint(kd, 10, 64)
	lo, _ := strconv.ParseUint(fd, 10, 64)
	hi, _ := strconv.ParseUint(td, 10, 64)
	return lo <= n && n <= hi
}

// unitCodes are the lots, prefixes ("0216911…") and serial numbers
// listed, for messages.
func (a Applicability) unitCodes() []string {
	out := append([]string(nil), a.Lots...)
	for _, p := range a.LotPrefixes {
		out = append(out, p+"…")
	}
	return append(out, a.Serials...)
}

// rangesText writes date ranges for a message: "2027-04-01 to 2027-04-30,
// 2026-07-22".
func rangesText(rs []DateRange) string {
	var parts []string
	for _, r := range rs {
		switch {
		case r.From == r.To:
			parts = append(parts, r.From)
		case r.From == OpenFrom:
			parts = append(parts, "up to "+r.To)
		case r.To == OpenTo:
			parts = append(parts, "from "+r.From)
		default:
			parts = append(parts, r.From+" to "+r.To)
		}
	}
	return strings.Join(parts, ", ")
}

// AllCodesCondition returns the part of Text that covers every code on a
// condition a unit may not meet, as printed ("All codes where milk is not
// declared on the label", "All units sold up to and including
// 2021-08-13"); "" when the codes cover every code plainly ("All lot
// codes", "Tous les codes", "All lots.") or do not say they cover every
// code. Covers counts such a part covered, as the notice does; whether a
// package meets the condition is for a person holding it to say.
func (a Applicability) AllCodesCondition() string {
	if !a.AllCodes {
		return ""
	}
	for _, seg := range segments(a.Text) {
		folded := strings.TrimRight(FoldKey(seg), ". ")
		if !allCodesPart(folded) {
			continue
		}
		words := strings.Fields(folded)
		words = words[1:] // "all"
		if words[0] == "les" {
			words = words[1:] // "tous les", "toutes les"
		}
		for len(words) > 0 && (allWords[strings.Trim(words[0], ".,:")] || plainAllWords[words[0]]) {
			words = words[1:]
		}
		if len(words) > 0 {
			return seg
		}
	}
	return ""
}

// plainAllWords may follow "all" with allWords and add no condition: "All
// best before dates", "All lot numbers", "Tous les codes de produit".
var plainAllWords = map[string]bool{
	"before": true, "by": true, "lot": true, "code": true, "codes": true, "numbers": true, "number": true, "of": true,
	"de": true, "du": true, "produit": true, "the": true, "this": true, "product": true, "and": true, "et": true,
}

// allCodesText is the part of Text that says it covers every code.
func (a Applicability) allCodesText() string {
	for _, seg := range segments(a.Text) {
		if allCodesPart(strings.TrimRight(FoldKey(seg), ". ")) {
			return seg
		}
	}
	return ""
}
