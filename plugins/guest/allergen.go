package guest

import (
	"fmt"
	"strings"

	"github.com/rappel-ca/rappel"
)

// allergenNames maps the names notices give allergens, lower case, without
// accents and in the singular, to the allergen vocabulary
// (rappel.Allergens). The names are typed by people in two languages, so
// the common variants are here: US spellings, "soya", the tree nuts and
// gluten-bearing grains by name, molluscs for shellfish.
var allergenNames = map[string]string{
	// English.
	"milk": "milk", "peanut": "peanut", "gluten": "gluten", "egg": "egg", "fish": "fish",
	"sesame": "sesame", "sesame seed": "sesame", "soy": "soy", "soya": "soy", "soybean": "soy",
	"sulphite": "sulphites", "sulfite": "sulphites", "sulphur dioxide": "sulphites",
	"tree nut": "tree_nut", "tree_nut": "tree_nut", "nut": "tree_nut", "almond": "tree_nut",
	"brazil nut": "tree_nut", "cashew": "tree_nut", "hazelnut": "tree_nut", "macadamia": "tree_nut",
	"macadamia nut": "tree_nut", "pecan": "tree_nut", "pine nut": "tree_nut", "pistachio": "tree_nut",
	"walnut": "tree_nut", "wheat": "wheat", "triticale": "wheat", "barley": "gluten", "rye": "gluten",
	"oat": "gluten", "anchovy": "fish", "anchovie": "fish", "mustard": "mustard", "mustard seed": "mustard", "crustacean": "crustacean",
	"shrimp": "crustacean", "crab": "crustacean", "lobster": "crustacean", "shellfish": "shellfish",
	"mollusc": "shellfish", "mollusk": "shellfish",
	// French.
	"lait": "milk", "anchois": "fish", "arachide": "peanut", "cacahuete": "peanut", "oeuf": "egg", "poisson": "fish",
	"graine de sesame": "sesame", "soja": "soy", "noix": "tree_nut",
	"fruit a coque": "tree_nut", "amande": "tree_nut", "noix du bresil": "tree_nut",
	"noix de cajou": "tree_nut", "noisette": "tree_nut", "noix de macadamia": "tree_nut",
	"pacane": "tree_nut", "noix de pecan": "tree_nut", "pignon": "tree_nut", "pistache": "tree_nut",
	"noix de grenoble": "tree_nut", "ble": "wheat", "orge": "gluten", "seigle": "gluten",
	"avoine": "gluten", "moutarde": "mustard", "graine de moutarde": "mustard",
	"crustace": "crustacean", "crevette": "crustacean", "crabe": "crustacean", "homard": "crustacean",
	"mollusque": "shellfish", "fruit de mer": "shellfish",
}

// FoldKey is s in the form names are compared in (rappel.FoldKey): lower
// case, French accents removed and ligatures spelled out, runs of space
// collapsed.
func FoldKey(s string) string { return rappel.FoldKey(s) }

// Allergen maps an allergen's name as a notice writes it, in English or
// French, singular or plural, in any case ("Peanuts", "Arachides",
// "Œufs", "Tree nuts"), to its value in the allergen vocabulary. ok is
// false for a name it does not know.
func Allergen(name string) (allergen string, ok bool) {
	key := FoldKey(name)
	if a, ok := allergenNames[key]; ok {
		return a, true
	}
	// Plurals: "peanuts", "tree nuts", "graines de sésame", "fruits à coque".
	words := strings.Fields(key)
	for i, w := range words {
		if len(w) > 3 && strings.HasSuffix(w, "s") {
			words[i] = strings.TrimSuffix(w, "s")
		}
	}
	a, ok := allergenNames[strings.Join(words, " ")]
	return a, ok
}

// allergenList names the vocabulary's allergens as the notices do in
// English, for problems.
var allergenList = []string{"Milk", "Peanuts", "Gluten", "Egg", "Fish", "Sesame", "Soy", "Sulphites", "Tree nuts", "Wheat", "Mustard", "Crustaceans", "Shellfish"}

// NotAllergen completes a problem about a name Allergen does not know: "is
// not one of Milk, Peanuts, … (did you mean Peanuts?)", the suggestion when
// one is close.
func NotAllergen(name string) string {
	hint := ""
	if near, ok := rappel.Nearest(name, allergenList); ok {
		hint = fmt.Sprintf(" (did you mean %s?)", near)
	}
	return fmt.Sprintf("is not one of %s%s", strings.Join(allergenList, ", "), hint)
}
