package detail

import (
	"regexp"
	"slices"
	"strings"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest"
)

// link finds a panel value's hyperlink.
var link = regexp.MustCompile(`(?is)<a\s[^<>]*?href\s*=\s*["']([^"']*)["']`)

// pair is one "Key: value" line of a panel.
type pair struct {
	key   string // folded (guest.FoldKey), without its colon
	value string // cleaned
	raw   string // the value's HTML
	label string // the key as written, cleaned, for problems
}

// pairs parses a panel's text into its lines, in order. Lines that are not
// "<b>Key:</b> value" are not data and are ignored.
func pairs(text string) []pair {
	var out []pair
	for _, line := range splitBreaks(text) {
		k, v, ok := keyValue(line)
		if !ok {
			continue
		}
		// The colon is usually inside the bold key, sometimes after it.
		key := strings.TrimSpace(strings.TrimSuffix(guest.CleanText(k), ":"))
		value := strings.TrimSpace(strings.TrimPrefix(guest.CleanText(v), ":"))
		if key != "" {
			out = append(out, pair{key: guest.FoldKey(key), value: value, raw: v, label: key})
		}
	}
	return out
}

// splitBreaks cuts text at its line breaks, <br>, <br/>, <BR />, in any
// case. A scanner rather than a regular expression: this runs on every
// panel of every document, and is the normalizer's hottest loop.
func splitBreaks(text string) []string {
	var lines []string
	start := 0
	for i := 0; i < len(text); i++ {
		if text[i] != '<' {
			continue
		}
		if end := breakEnd(text[i:]); end > 0 {
			lines = append(lines, text[start:i])
			start = i + end
			i = start - 1
		}
	}
	return append(lines, text[start:])
}

// breakEnd returns the length of the <br> tag s starts with, or 0.
func breakEnd(s string) int {
	if len(s) < 4 || !strings.EqualFold(s[1:3], "br") {
		return 0
	}
	i := 3
	skipSpace := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\f') {
			i++
		}
	}
	skipSpace()
	if i < len(s) && s[i] == '/' {
		i++
		skipSpace()
	}
	if i < len(s) && s[i] == '>' {
		return i + 1
	}
	return 0
}

// detailFields maps the details panel's single-valued keys to record fields.
var detailFields = map[string]func(*rappel.Record) *string{
	"identification number": func(r *rappel.Record) *string { return &r.IdentificationNumber },
	"alert type":            func(r *rappel.Record) *string { return &r.AlertType },
	"recalling firm":        func(r *rappel.Record) *string { return &r.RecallingFirm },
	"manufacturer":          func(r *rappel.Record) *string { return &r.Manufacturer },
	"importer":              func(r *rappel.Record) *string { return &r.Importer },
	"place of origin":       func(r *rappel.Record) *string { return &r.PlaceOfOrigin },
	"units sold":            func(r *rappel.Record) *string { return &r.UnitsSold },
	"time period sold":      func(r *rappel.Record) *string { return &r.TimePeriodSold },
	"recall class page":     func(r *rappel.Record) *string { return &r.RecallClassPage },
	"cfia id":               func(r *rappel.Record) *string { return &r.CFIAID },
	"din":                   func(r *rappel.Record) *string { return &r.DIN },
	"npn":                   func(r *rappel.Record) *string { return &r.NPN },
	"municipality":          func(r *rappel.Record) *string { return &r.Municipality },
	"upc":                   func(r *rappel.Record) *string { return &r.UPC },
}

// detailKeys are the keys of the details panels besides detailFields':
// those read into lists, and those known to hold nothing a record keeps
// (the agency and audience, which the dump's Organization says).
var detailKeys = map[string]bool{
	"companies": true, "distribution": true, "allergens": true, "category": true,
	"source of recall": true, "audience": true,
}

// keyValues fills rec from the document's key/value panels, in the order
// of keyValuePanels: a key seen twice keeps its first value. Keys it does
// not know are reported, once each.
func (n *notice) keyValues(rec *rappel.Record, d *document, file string) {
	var unknown unknownKeys
	for _, name := range keyValuePanels {
		p := d.panel(name)
		if p == nil {
			continue
		}
		kvs := p.pairs()
		if name == panelIDNumbers && len(kvs) == 0 && rec.IdentificationNumber == "" {
			// The panel is the identification number, without a key.
			rec.IdentificationNumber = guest.CleanText(p.Text)
		}
		for _, kv := range kvs {
			if !n.detail(rec, kv, file) {
				unknown.add(kv, name)
			}
		}
	}
	unknown.report(n, file)
}

// unknownKeys gathers what a document says under keys, or table columns,
// the normalizer does not know, each once, with the first panel it is in.
type unknownKeys []unknownKey

// unknownKey is a key, or a column (column > 0), of a panel.
type unknownKey struct {
	key, label, value, panel string
	column                   int
}

// add notes kv, found in panel, unless its key is noted already.
func (u *unknownKeys) add(kv pair, panel string) {
	u.note(unknownKey{key: kv.key, label: kv.label, value: kv.value, panel: panel})
}

// addColumn notes the header of a table's column, the column-th.
func (u *unknownKeys) addColumn(header string, column int, panel string) {
	u.note(unknownKey{key: "column " + guest.FoldKey(header), label: header, panel: panel, column: column})
}

func (u *unknownKeys) note(k unknownKey) {
	if !slices.ContainsFunc(*u, func(x unknownKey) bool { return x.key == k.key }) {
		*u = append(*u, k)
	}
}

// report says, for each, that what it holds was left out.
func (u unknownKeys) report(n *notice, file string) {
	for _, k := range u {
		switch {
		case k.column > 0 && k.label == "":
			n.problem("Column %d of the table in %s of %s has no header; its cells were left out.", k.column, k.panel, file)
		case k.column > 0:
			n.problem("The column %q of the table in %s of %s is none this normalizer knows; its cells were left out.", truncate(k.label), k.panel, file)
		default:
			n.problem("The key %q in %s of %s is none this normalizer knows; its value %q was left out.", truncate(k.label), k.panel, file, truncate(k.value))
		}
	}
}

// detail files one key/value line into rec, and reports whether the key is
// one the contract names.
func (n *notice) detail(rec *rappel.Record, kv pair, file string) bool {
	field, isField := detailFields[kv.key]
	if !isField && !detailKeys[kv.key] {
		return false
	}
	if kv.value == "" {
		return true
	}
	switch kv.key {
	case "companies":
		if rec.Companies == nil {
			rec.Companies = split(kv.value, ";")
		}
	case "distribution":
		if rec.Distribution == nil {
			rec.Distribution = split(kv.value, ",")
		}
	case "allergens":
		if rec.Allergens == nil {
			rec.Allergens = n.allergens(kv.value, file)
		}
	case "recall class page":
		// The page is a link: its address is the value, not its text.
		if m := link.FindStringSubmatch(kv.raw); m != nil && rec.RecallClassPage == "" {
			rec.RecallClassPage = guest.CleanText(m[1])
		}
	case "upc":
		if isNone(kv.value) || rec.UPC != "" {
			return true
		}
		if _, err := rappel.ParseGTIN(kv.value); err != nil {
			n.problem("The UPC %q in the details of %s was dropped: %v.", truncate(kv.value), file, err)
			return true
		}
	}
	if isField && *field(rec) == "" {
		*field(rec) = kv.value
	}
	return true
}

// split cuts a list at sep and cleans its items.
func split(s, sep string) []string {
	var out []string
	for _, item := range strings.Split(s, sep) {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// allergens maps a ", " separated list of allergen names to the vocabulary,
// in order, without repeats. An unknown name is reported and left out.
func (n *notice) allergens(s, file string) []string {
	var out []string
	for _, name := range split(s, ",") {
		a, ok := guest.Allergen(name)
		if !ok {
			n.problem("The allergen %q in %s %s; it was left out.", truncate(name), file, guest.NotAllergen(name))
			continue
		}
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}
