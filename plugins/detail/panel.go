package detail

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest"
)

// link finds a panel value's hyperlink.
var link = regexp.MustCompile(`(?is)<a\s[^<>]*?href\s*=\s*["']([^"']*)["']`)

// pair is one "Key: value" line of a panel.
type pair struct {
	key   string // lower case, without its colon
	value string // cleaned
	raw   string // the value's HTML
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
			out = append(out, pair{key: strings.ToLower(key), value: value, raw: v})
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

// details fills rec from the document's details panel. A key seen twice
// keeps its first value; keys the contract does not name are ignored.
func (n *notice) details(rec *rappel.Record, d *document, file string) {
	p := d.panel("details")
	if p == nil {
		return
	}
	for _, kv := range pairs(p.Text) {
		if kv.value == "" {
			continue
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
				continue
			}
			if _, err := rappel.ParseGTIN(kv.value); err != nil {
				n.problem("The UPC %q in the details of %s was dropped: %v.", truncate(kv.value), file, err)
				continue
			}
		}
		if field, ok := detailFields[kv.key]; ok && *field(rec) == "" {
			*field(rec) = kv.value
		}
	}
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

// productPanel is a product panel and its number, product_<n>.
type productPanel struct {
	n int
	p *panel
}

// products reads the document's product panels, in their numbers' order.
func (n *notice) products(d *document, file string) []rappel.Product {
	var panels []productPanel
	for i := range d.Panels {
		name := strings.ToLower(strings.TrimSpace(d.Panels[i].Name))
		num, ok := strings.CutPrefix(name, "product_")
		if !ok {
			continue
		}
		k, err := strconv.Atoi(num)
		if err != nil {
			continue // not a product panel, whatever it is
		}
		panels = append(panels, productPanel{k, &d.Panels[i]})
	}
	slices.SortStableFunc(panels, func(a, b productPanel) int { return cmp.Compare(a.n, b.n) })
	var out []rappel.Product
	for _, pp := range panels {
		if prod, ok := n.product(pp, file); ok {
			out = append(out, prod)
		}
	}
	return out
}

// product reads one product panel; the keys are English or French. A
// product needs a name: the Product line, else the panel's title.
func (n *notice) product(pp productPanel, file string) (rappel.Product, bool) {
	var prod rappel.Product
	var upc string
	for _, kv := range pairs(pp.p.Text) {
		switch kv.key {
		case "product", "produit":
			prod.Name = cmp.Or(prod.Name, kv.value)
		case "upc", "cup":
			upc = cmp.Or(upc, kv.value)
		case "lot or code", "lot ou code":
			if prod.LotCodes == nil && !isNone(kv.value) {
				prod.LotCodes = lotCodes(kv.value)
			}
		case "size", "format":
			prod.Size = cmp.Or(prod.Size, kv.value)
		}
	}
	prod.Name = cmp.Or(prod.Name, guest.CleanText(pp.p.Title))
	if prod.Name == "" {
		n.problem("Product panel product_%d of %s was skipped: it names no product.", pp.n, file)
		return prod, false
	}
	if !isNone(upc) {
		n.productCode(&prod, upc, pp.n, file)
	}
	return prod, true
}

// productCode files a product's UPC value. A valid barcode is its upc, as
// printed (the GTIN is the index's business). A prefix the codes of an item
// sold by weight start with ("Starting with 0235278", "Commençant par
// 0235278") is its upc_prefix, in digits. Digits that are no valid barcode
// (a code printed without its check digit, or with a wrong one) are still
// the notice's words for the product, which someone holding the package
// may search for: they join its lot codes, the panel's "Lot or code", and
// never its upc, which only a real barcode may be. Anything else is
// reported and dropped.
func (n *notice) productCode(prod *rappel.Product, upc string, panel int, file string) {
	if rest, ok := cutPrefixWords(upc); ok {
		digits := rappel.StripBarcode(rest)
		if digits != "" && len(digits) < 14 && isDigits(digits) {
			prod.UPCPrefix = digits
			return
		}
		n.problem("The UPC prefix %q of product %q (product_%d) in %s was dropped: a prefix is 1 to 13 digits.", truncate(upc), truncate(prod.Name), panel, file)
		return
	}
	_, err := rappel.ParseGTIN(upc)
	switch digits := rappel.StripBarcode(upc); {
	case err == nil:
		prod.UPC = upc
	case isDigits(digits) && len(digits) <= 20:
		if !slices.Contains(prod.LotCodes, upc) {
			prod.LotCodes = append(prod.LotCodes, upc)
		}
	default:
		n.problem("The UPC %q of product %q (product_%d) in %s was dropped: %v.", truncate(upc), truncate(prod.Name), panel, file, err)
	}
}

// prefixWords introduce a barcode prefix, lower case and without accents.
var prefixWords = []string{
	"starting with", "starts with", "beginning with", "begins with", "all codes starting with",
	"commencant par", "commence par", "debutant par", "debute par", "tous les codes commencant par",
}

// cutPrefixWords returns what follows the words that introduce a barcode
// prefix at the start of s, and whether there are such words.
func cutPrefixWords(s string) (string, bool) {
	fields := strings.Fields(s)
	for _, w := range prefixWords {
		n := len(strings.Fields(w))
		if len(fields) > n && strings.TrimSuffix(guest.FoldKey(strings.Join(fields[:n], " ")), ":") == w {
			return strings.TrimLeft(strings.Join(fields[n:], " "), ": "), true
		}
	}
	return "", false
}

// isDigits reports whether s is ASCII digits only, and not empty.
func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// isNone reports whether a value says there is none.
func isNone(s string) bool { return s == "" || strings.EqualFold(s, "none") }

// lotCodes splits a "Lot or code" value into codes. The contract names no
// separator; lists are written with ", " or "; " elsewhere, and a code
// itself holds neither.
func lotCodes(s string) []string {
	var out []string
	for _, part := range split(s, ";") {
		out = append(out, split(part, ",")...)
	}
	return out
}

// image is one element of the images panel's data.
type image struct {
	URL   string `json:"url"`
	Title string `json:"title"`
}

// images reads the images panel: the images, and the first one's URL when
// it is an absolute https URL, which is all a page may embed.
func (n *notice) images(d *document, file string) ([]rappel.Image, string) {
	p := d.panel("images")
	if p == nil || len(p.Data) == 0 || string(p.Data) == "null" {
		return nil, ""
	}
	var in []image
	if err := json.Unmarshal(p.Data, &in); err != nil {
		var typ *json.UnmarshalTypeError
		why := "it is not a list of {url, title}"
		if errors.As(err, &typ) && typ.Field != "" {
			why = fmt.Sprintf("its %s is a JSON %s, not a string", typ.Field, typ.Value)
		}
		n.problem("The images panel of %s was left out: %s.", file, why)
		return nil, ""
	}
	var out []rappel.Image
	for _, im := range in {
		if u := guest.CleanText(im.URL); u != "" {
			out = append(out, rappel.Image{URL: u, Title: guest.CleanText(im.Title)})
		}
	}
	if len(out) == 0 {
		return nil, ""
	}
	if u, err := url.Parse(out[0].URL); err == nil && u.Scheme == "https" && u.Host != "" {
		return out, out[0].URL
	}
	return out, ""
}
