package guest

import (
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
)

func TestAllergen(t *testing.T) {
	for name, want := range map[string]string{
		"Milk": "milk", "Peanuts": "peanut", "peanut": "peanut", "Tree nuts": "tree_nut", "Tree Nut": "tree_nut",
		"Eggs": "egg", "Sulfites": "sulphites", "Sesame seeds": "sesame", "Soya": "soy", "Crustaceans": "crustacean",
		"Molluscs": "shellfish", "Shellfish": "shellfish", "Wheat": "wheat", "Triticale": "wheat", "Gluten": "gluten",
		"Mustard": "mustard", "Fish": "fish", "Cashews": "tree_nut",
		"Lait": "milk", "Arachides": "peanut", "Œufs": "egg", "oeufs": "egg", "Noix": "tree_nut",
		"Fruits à coque": "tree_nut", "Blé": "wheat", "Soja": "soy", "Graines de sésame": "sesame",
		"Moutarde": "mustard", "sulfite": "sulphites", "Poisson": "fish", "Crustacés": "crustacean",
		"Mollusques": "shellfish", "  GLUTEN  ": "gluten",
	} {
		got, ok := Allergen(name)
		if !ok || got != want {
			t.Errorf("Allergen(%q) = %q, %v; want %q", name, got, ok, want)
		}
		if !rappel.Allergens.Has(got) {
			t.Errorf("Allergen(%q) = %q, outside the vocabulary", name, got)
		}
	}
	for _, name := range []string{"Lupin", "Peanutss", "Glass", "", "s", "Listeria"} {
		if got, ok := Allergen(name); ok {
			t.Errorf("Allergen(%q) = %q, want none", name, got)
		}
	}
	// Every value of the vocabulary has a name.
	for _, a := range rappel.Allergens {
		if got, ok := Allergen(strings.ReplaceAll(a, "_", " ")); !ok || got != a {
			t.Errorf("the vocabulary's %q has no name: %q, %v", a, got, ok)
		}
	}
}

func TestNotAllergen(t *testing.T) {
	if got := NotAllergen("Peanutss"); !strings.HasPrefix(got, "is not one of Milk, Peanuts,") || !strings.HasSuffix(got, "(did you mean Peanuts?)") {
		t.Errorf("NotAllergen(Peanutss) = %q", got)
	}
	if got := NotAllergen("Lupin"); strings.Contains(got, "did you mean") {
		t.Errorf("NotAllergen(Lupin) = %q suggests a name", got)
	}
}
