package hcdump

import (
	"slices"
	"strings"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/hcvocab"
	"github.com/rappel-ca/rappel/plugins/guest"
)

// issue is what an Issue value says beyond its text.
type issue struct {
	labels    []string // the labels, as written, in order
	hazards   []string // the hazard type of each label ("" for none)
	allergens []string // the allergen vocabulary's values named, in order, without repeats
	unknown   []string // labels outside the vocabulary, as written
	freeText  bool     // the Issue is a sentence, not labels
}

// maxLabelWords is the most words a label has ("Non harmful (quality or
// spoilage)"); a part with more is prose.
const maxLabelWords = 6

// parseIssue reads an Issue (Problème) value: short labels joined by " - "
// ("Egg - Soy - Milk", "Salmonella", "E. Coli - non-pathogenic -
// Staphylococcus aureus"), read with the dump's vocabulary
// (hcvocab.SplitIssue, hcvocab.LookupIssueLabel). Older rows may hold a
// sentence instead, which names no label.
func parseIssue(s string) issue {
	var out issue
	if s == "" {
		return out
	}
	labels := hcvocab.SplitIssue(s)
	for _, l := range labels {
		if strings.HasSuffix(l, ".") || len(strings.Fields(l)) > maxLabelWords {
			return issue{freeText: true}
		}
	}
	out.labels = labels
	for _, l := range labels {
		known, ok := hcvocab.LookupIssueLabel(l)
		if !ok {
			out.unknown = append(out.unknown, l)
		}
		out.hazards = append(out.hazards, known.Hazard)
		for _, a := range known.Allergens {
			if !slices.Contains(out.allergens, a) {
				out.allergens = append(out.allergens, a)
			}
		}
	}
	return out
}

// describe writes the hazard description of labels that are all known:
// each run of labels of one hazard type after the type's name ("Allergen:
// Egg, Soy, Milk"; "Microbial contamination: Salmonella"), a label that is
// its type's own name, or names none ("Other"), as itself. It returns ""
// when a label is unknown or the Issue is prose: the Issue as written then
// serves.
func (is issue) describe(lang string) string {
	if len(is.labels) == 0 || len(is.unknown) > 0 {
		return ""
	}
	sep := ": "
	i := 0
	if lang == rappel.LangFR {
		sep, i = " : ", 1
	}
	var groups []string
	for k := 0; k < len(is.labels); {
		h := is.hazards[k]
		end := k + 1
		for end < len(is.labels) && h != "" && is.hazards[end] == h {
			end++
		}
		names := hcvocab.HazardNames[h]
		name := names[i]
		switch {
		case h == "":
			groups = append(groups, is.labels[k])
		case end == k+1 && hcvocab.NamesHazard(is.labels[k], h):
			groups = append(groups, name)
		default:
			groups = append(groups, name+sep+strings.Join(is.labels[k:end], ", "))
		}
		k = end
	}
	return strings.Join(groups, "; ")
}

// undeclared returns the allergens a title names as undeclared: "recalled
// due to undeclared egg, soy and milk", "… en raison d'arachides non
// déclarées", "… en raison de la présence non déclarée de lait". It is read
// only when the Issue names none.
func undeclared(title string) []string {
	var out []string
	add := func(names []string) {
		for _, name := range names {
			a, ok := guest.Allergen(name)
			if !ok {
				return // the list ended: what follows is no allergen
			}
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	lower := strings.ToLower(title)
	for _, at := range indexAll(lower, "undeclared ") {
		add(listNames(lower[at+len("undeclared "):], "and"))
	}
	folded := guest.FoldKey(title) // accents out: "non déclarées" is "non declarees"
	for _, at := range indexAll(folded, "non declare") {
		add(frenchBefore(folded[:at]))
		add(frenchAfter(folded[at:]))
	}
	return out
}

// indexAll returns the offsets of every occurrence of sub in s.
func indexAll(s, sub string) []int {
	var out []int
	for i := 0; ; {
		j := strings.Index(s[i:], sub)
		if j < 0 {
			return out
		}
		out = append(out, i+j)
		i += j + len(sub)
	}
}

// listNames cuts the start of s, an enumeration "a, b and c", into its
// names, stopping at a word that ends the list ("in", "due", "brand").
func listNames(s, and string) []string {
	var names []string
	for _, item := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '&' || r == ';' }) {
		words := strings.Fields(item)
		start := 0
		for i, w := range words {
			if strings.EqualFold(w, and) {
				names = appendTrimmed(names, strings.Join(words[start:i], " "))
				start = i + 1
			}
		}
		names = appendTrimmed(names, strings.Join(words[start:], " "))
	}
	return names
}

// frenchArticles start a French noun phrase: "de lait", "d'arachides", "du
// blé", "des œufs", "de la moutarde" (folded, so without accents).
var frenchArticles = []string{"de la ", "de l'", "d'", "de ", "du ", "des "}

// trimArticle removes a leading article from a folded French phrase.
func trimArticle(s string) string {
	s = strings.TrimSpace(s)
	for _, a := range frenchArticles {
		if rest, ok := strings.CutPrefix(s, a); ok {
			return strings.TrimSpace(rest)
		}
	}
	return s
}

// frenchBefore reads the allergen written before "non déclaré(e)(s)" in a
// folded title: "… en raison de lait" or "… en raison d'arachides" gives
// the last noun phrase, joined by "et" to the ones before it.
func frenchBefore(s string) []string {
	if i := strings.LastIndex(s, "en raison "); i >= 0 {
		s = s[i+len("en raison "):]
	}
	var names []string
	for _, n := range listNames(s, "et") {
		names = appendTrimmed(names, trimArticle(n))
	}
	// The name closest to the marker is the one it qualifies; read from
	// there back.
	slices.Reverse(names)
	return names
}

// frenchAfter reads the allergens written after the marker: "non déclarée
// de lait et d'œufs".
func frenchAfter(s string) []string {
	words := strings.Fields(s)
	if len(words) < 3 {
		return nil
	}
	var names []string
	for _, n := range listNames(strings.Join(words[2:], " "), "et") {
		names = appendTrimmed(names, trimArticle(n))
	}
	return names
}

func appendTrimmed(list []string, s string) []string {
	if s = strings.TrimSpace(s); s != "" {
		list = append(list, s)
	}
	return list
}
