package hcdump

import (
	"slices"
	"strings"

	"github.com/rappel-ca/rappel/plugins/guest"
)

// Hazard kinds an Issue names. The record has no field for the kind (the
// spec has none); the kind says how to read the rest of the Issue: only
// under an allergen is "Fish" an allergen.
const (
	kindAllergen  = "allergen"
	kindMicrobial = "microbial contamination"
	kindForeign   = "extraneous material"
	kindChemical  = "chemical"
)

// kinds maps an Issue part, lower case and without accents, to the hazard
// kind it names, in English and French.
var kinds = map[string]string{
	"allergen": kindAllergen, "allergens": kindAllergen, "allergy": kindAllergen,
	"undeclared allergen": kindAllergen, "undeclared allergens": kindAllergen,
	"allergene": kindAllergen, "allergenes": kindAllergen, "allergie": kindAllergen,
	"allergene non declare": kindAllergen, "allergenes non declares": kindAllergen,
	"microbial contamination": kindMicrobial, "microbiological contamination": kindMicrobial,
	"microbial": kindMicrobial, "contamination microbienne": kindMicrobial,
	"contamination microbiologique": kindMicrobial,
	"extraneous material":           kindForeign, "foreign material": kindForeign, "foreign matter": kindForeign,
	"corps etranger": kindForeign, "corps etrangers": kindForeign, "matiere etrangere": kindForeign,
	"matieres etrangeres": kindForeign,
	"chemical":            kindChemical, "chemical contamination": kindChemical, "chimique": kindChemical,
	"contamination chimique": kindChemical,
}

// vague are allergen "names" that name none: the Issue lists the kind with
// a catch-all, which is no allergen to file the recall under and no
// problem either.
var vague = map[string]bool{
	"other": true, "others": true, "multiple": true, "various": true, "undeclared": true,
	"autre": true, "autres": true, "plusieurs": true, "divers": true, "non declare": true,
}

// issue is what an Issue value says beyond its text.
type issue struct {
	kinds     []string // hazard kinds named, in order, without repeats
	allergens []string // the allergen vocabulary's values, in order, without repeats
	unknown   []string // allergen names outside the vocabulary, as written
}

// parseIssue reads an Issue (Problème) value. The dump writes it as a path
// of terms from general to particular joined by " - ": an area, a hazard
// kind, and details ("Food - Allergen - Milk", "Food - Microbial
// Contamination - Listeria", "Allergène - Arachides"). Several hazards are
// joined by ", " or "; ", each a full path ("Food - Allergen - Egg, Food -
// Allergen - Milk") or only the details, which then belong to the kind
// before ("Food - Allergen - Egg, Milk"); one detail may also join names
// with "and", "et", "&" or "/" ("Crustaceans and molluscs"). Free text,
// which older rows hold, names no kind and gives nothing.
func parseIssue(s string) issue {
	var out issue
	kind := ""
	for _, term := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ';' || r == '|' }) {
		parts := splitDash(term)
		at := -1
		for i, p := range parts {
			if k, ok := kinds[guest.FoldKey(p)]; ok {
				at, kind = i, k
				if !slices.Contains(out.kinds, k) {
					out.kinds = append(out.kinds, k)
				}
				break
			}
		}
		if at < 0 && (kind == "" || len(parts) > 1) {
			// Neither a path with a kind nor a bare continuation of the
			// term before: free text, or an area alone.
			kind = ""
			continue
		}
		if kind != kindAllergen {
			continue
		}
		for _, p := range parts[at+1:] {
			for _, name := range splitNames(p) {
				out.addAllergen(name)
			}
		}
	}
	return out
}

// addAllergen files one name as an allergen, unknown or vague.
func (is *issue) addAllergen(name string) {
	if a, ok := guest.Allergen(name); ok {
		if !slices.Contains(is.allergens, a) {
			is.allergens = append(is.allergens, a)
		}
		return
	}
	if !vague[guest.FoldKey(name)] && !slices.Contains(is.unknown, name) {
		is.unknown = append(is.unknown, name)
	}
}

// splitDash cuts a term at its " - " joins (any dash, with spaces around
// it: a hyphen inside a word, as in "E. coli O157:H7" or "Ready-to-eat", is
// not a join), trimmed, empty parts dropped.
func splitDash(s string) []string {
	var parts []string
	start := 0
	rs := []rune(s)
	for i := 1; i+1 < len(rs); i++ {
		if isDash(rs[i]) && rs[i-1] == ' ' && rs[i+1] == ' ' {
			parts = appendTrimmed(parts, string(rs[start:i]))
			start = i + 1
		}
	}
	return appendTrimmed(parts, string(rs[start:]))
}

func isDash(r rune) bool { return r == '-' || r == '–' || r == '—' }

// splitNames cuts one detail into the allergen names it joins.
func splitNames(s string) []string {
	var out []string
	for _, p := range strings.FieldsFunc(s, func(r rune) bool { return r == '&' || r == '/' || r == '+' }) {
		words := strings.Fields(p)
		start := 0
		for i, w := range words {
			if lw := strings.ToLower(w); lw == "and" || lw == "et" {
				out = appendTrimmed(out, strings.Join(words[start:i], " "))
				start = i + 1
			}
		}
		out = appendTrimmed(out, strings.Join(words[start:], " "))
	}
	return out
}

func appendTrimmed(list []string, s string) []string {
	if s = strings.TrimSpace(s); s != "" {
		list = append(list, s)
	}
	return list
}
