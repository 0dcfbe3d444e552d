package match

import (
	"slices"
	"testing"

	"github.com/rappel-ca/rappel"
)

// TestWords checks how names are compared: folded, plurals dropped,
// words that name no product left out.
func TestWords(t *testing.T) {
	for in, want := range map[string][]string{
		"Amy's Organic Lentil Soups (Less Sodium) 398 mL": {"amy", "organic", "lentil", "soup", "less", "sodium"},
		"L'Érabeille Sirop d'érable pur":                  {"erabeille", "sirop", "erable", "pur"},
		"Œufs de la ferme, 12 x":                          {"oeuf", "ferme"},
		"Glass jars":                                      {"glass", "jar"},
		"The brand Inc. 100 g":                            nil,
	} {
		if got := words(in); !slices.Equal(got, want) {
			t.Errorf("words(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCodes checks how models and lots are compared: letters and digits
// only, and every run of a text's parts holding a digit.
func TestCodes(t *testing.T) {
	for in, want := range map[string]string{"KHK 190026-001": "KHK190026001", "gt-r": "GTR", "Ré 5": "RE5", "  ": ""} {
		if got := code(in); got != want {
			t.Errorf("code(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string][]string{
		"Lot # 26025260":                       {"LOT26025260", "26025260"},
		"This recall involves model #CS0003.":  {"CS0003"},
		"Amana PBH113J35AA (Model type: Heat)": {"PBH113J35AA"},
		"Kith KHK 190026-001":                  {"KHK190026001", "190026001"},
		"Solo III Portable Vaporizer":          nil,
	} {
		if got := codes(in); !slices.Equal(got, want) {
			t.Errorf("codes(%q) = %q, want %q", in, got, want)
		}
	}
	for c, want := range map[string]bool{"CS0003": true, "A1": false, "SOLO": false, "078": true} {
		if isModelCode(c) != want {
			t.Errorf("isModelCode(%q) = %v", c, !want)
		}
	}
}

// TestCovers checks the lot and date decision as it stands until the
// notices' codes are parsed: a lot the entry lists exactly is covered;
// anything else is undecided, never not covered, so that a product that
// matched is check_lot, not no_match.
func TestCovers(t *testing.T) {
	// As printed only: no parsed codes, so only a lot listed exactly
	// decides.
	p := &rappel.Product{Name: "Amy's Organic Lentil Soup", LotCodes: []string{"Best Before 04/2027 Lot 60D0924", " 60D0925 "}}
	// The notices' codes read (rappel.ParseLabelledCodes), as the sources
	// give them.
	parsed := func(codes ...rappel.LabelledCode) *rappel.Product {
		q := &rappel.Product{Name: "x"}
		for _, c := range codes {
			q.LotCodes = append(q.LotCodes, c.Text)
		}
		a := rappel.ParseLabelledCodes(codes)
		q.Applicability = &a
		return q
	}
	amy := parsed(rappel.LabelledCode{Text: "Best Before 04/2027 Lot 60D0924"})
	device := parsed(rappel.LabelledCode{Label: "Model or catalogue number", Text: "A30034AC"}, rappel.LabelledCode{Label: "Lot or serial number", Text: "NGKT2492"})
	model := parsed(rappel.LabelledCode{Label: "Part number", Text: "196017"})
	milk := parsed(rappel.LabelledCode{Text: "All codes where milk is not declared on the label"})
	all := parsed(rappel.LabelledCode{Text: "All lot codes"})
	packed := parsed(rappel.LabelledCode{Label: "Packaging date", Text: "2026-05-07"})
	unread := parsed(rappel.LabelledCode{Text: "Lot 123"}, rappel.LabelledCode{Text: ">50 Lot Numbers. Contact MFG"})
	for _, c := range []struct {
		p                *rappel.Product
		lot, date        string
		covered, decided bool
	}{
		{p, "Best Before 04/2027 Lot 60D0924", "", true, true},
		{p, "60D0925", "2027-04-30", true, true},
		{p, "60D0924", "", false, false},
		{p, "", "2027-04-30", false, false},
		{p, "", "", false, false},
		{&rappel.Product{Name: "x"}, "L1", "", false, false},
		{nil, "L1", "", false, false},
		// Parsed: lots and dates decide, either way.
		{amy, "Best Before 04/2027 Lot 60D0924", "", true, true},
		{amy, "60D0924", "2027-04-30", true, true},
		{amy, "", "2027-04-15", true, true},
		{amy, "60D1125", "2027-06-30", false, true},
		{amy, "60D0924", "2027-06-30", false, false},
		{amy, "", "", false, false},
		// A model number is no lot: it does not rule the item's lot out.
		{device, "NGKT2492", "", true, true},
		{device, "NGKT2493", "", false, true},
		{model, "196017", "", true, true},
		{model, "L2025-11", "", false, false},
		// Every code, plainly or on a condition only the package answers.
		{all, "", "", true, true},
		{all, "X1", "", true, true},
		{milk, "L2025-11", "", false, false},
		{milk, "", "", false, false},
		// Codes that select nothing, or could not all be read.
		{packed, "L1", "2026-05-07", false, false},
		{unread, "124", "", false, false},
		{unread, "123", "", true, true},
	} {
		covered, decided, why := covers(c.p, c.lot, c.date)
		if covered != c.covered || decided != c.decided || why == "" || why[len(why)-1] != '.' {
			t.Errorf("covers(%v, %q, %q) = %v, %v, %q; want %v, %v and a sentence", c.p, c.lot, c.date, covered, decided, why, c.covered, c.decided)
		}
	}
}

// TestBrand checks when a notice names an item's brand: all its words, or
// all but one of three or more, the first among them.
func TestBrand(t *testing.T) {
	r := prepare(&rappel.Record{RecordID: "hc-1", ProductList: []rappel.Product{{Name: "Five Star Shellfish Inc. Malpeque oysters"}},
		Translations: rappel.Translations{EN: &rappel.Translation{Title: "Certain Five Star Shellfish Inc. brand oysters recalled"}}})
	for brand, want := range map[string]bool{
		"Five Star Shellfish": true, "FIVE STAR": true, "Five Star Seafood Shellfish": true, "Blue Star Shellfish": false,
		"Five Stars Oysters Co": true, "Clearwater": false, "Five Seas": false, "": true,
	} {
		if got := r.hasBrand(words(brand)); got != want {
			t.Errorf("hasBrand(%q) = %v, want %v", brand, got, want)
		}
	}
}

// TestYears checks how a recall's model years are written.
func TestYears(t *testing.T) {
	var vs []vehicle
	for _, y := range []int{2013, 2010, 2011, 2011, 2016, 2015} {
		vs = append(vs, vehicle{year: y})
	}
	if got := yearList(vs); got != "2010–2011, 2013, 2015–2016" {
		t.Errorf("yearList = %q", got)
	}
	for a, b := range map[string]string{"Santa Fe": "SANTA FE SPORT", "F-150 XLT": "F-150"} {
		if !wordPrefix(a, b) || wordPrefix("Santa", "Sonata") {
			t.Errorf("wordPrefix(%q, %q)", a, b)
		}
	}
}

// TestConfidences checks that every class of evidence has a confidence
// between 0 and 1, a barcode of the brand the strongest.
func TestConfidences(t *testing.T) {
	for _, c := range Classes() {
		if v := Confidence(c); v <= 0 || v >= 1 || v > Confidence(classGTIN) && c != classGTIN {
			t.Errorf("confidence of %s: %v", c, v)
		}
	}
	if len(confidences) != len(Classes()) {
		t.Errorf("%d confidences for %d classes", len(confidences), len(Classes()))
	}
}
