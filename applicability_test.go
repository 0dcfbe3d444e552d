package rappel

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// day and month are DateRange shorthands for the tables below.
func day(d string) DateRange { return DateRange{d, d} }

func month(from, to string) DateRange { return DateRange{from, to} }

func TestParseApplicability(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Applicability // Text is filled in
	}{
		// Food (CFIA tables), as the live pages print them.
		{"Best Before 04/2027 Lot 60D0924", Applicability{Lots: []string{"60D0924"}, BestBefore: []DateRange{month("2027-04-01", "2027-04-30")}}},
		{"4-281-25 BB 4/27", Applicability{Lots: []string{"4-281-25"}, BestBefore: []DateRange{month("2027-04-01", "2027-04-30")}}},
		{"BB: 22-JULY-26", Applicability{BestBefore: []DateRange{day("2026-07-22")}}},
		{"Best before: JUN/14/2028", Applicability{BestBefore: []DateRange{day("2028-06-14")}}},
		{"Harvest/process date: 22-JUNE-26; Shipping date: 23-JUNE-26; Harvest location: PEI 1Q; Grade: Standard; BB: 22-JULY-26",
			Applicability{BestBefore: []DateRange{day("2026-07-22")}}},
		{"Lot XT21253, PO M14475, BB 2023-SE-09", Applicability{Lots: []string{"XT21253"}, BestBefore: []DateRange{day("2023-09-09")}}},
		{"2023 DE 15", Applicability{BestBefore: []DateRange{day("2023-12-15")}}},
		{"Best Before 2027 AL 15", Applicability{BestBefore: []DateRange{day("2027-04-15")}}},
		{"BB 27 AL 15", Applicability{BestBefore: []DateRange{day("2027-04-15")}}}, // the regulations' year-symbol-day
		{"All codes where milk is not declared on the label", Applicability{AllCodes: true}},
		{"All lot codes", Applicability{AllCodes: true}},
		{"All units sold up to and including August 13, 2021", Applicability{AllCodes: true}},
		{"Starting with 0216911", Applicability{LotPrefixes: []string{"0216911"}}},
		{"Starts with 282038", Applicability{LotPrefixes: []string{"282038"}}},
		{"All codes where the first digits are 1234", Applicability{LotPrefixes: []string{"1234"}}},
		{"ESC-26-238 10/02/27; ESC-26-238 11/02/27", Applicability{Lots: []string{"ESC-26-238"}, Unread: "10/02/27; 11/02/27"}},
		{"Best Before JN 22", Applicability{Unread: "Best Before JN 22"}},
		{"Packed on 2026-01-02", Applicability{}},
		{"None", Applicability{}},
		// Dates in every order the brief's sources print.
		{"BB 2027/04/15", Applicability{BestBefore: []DateRange{day("2027-04-15")}}},
		{"BB 15/04/2027", Applicability{BestBefore: []DateRange{day("2027-04-15")}}},
		{"BB 04/15/2027", Applicability{BestBefore: []DateRange{day("2027-04-15")}}},
		{"BB 2027-04-15", Applicability{BestBefore: []DateRange{day("2027-04-15")}}},
		{"BB 04/05/2027", Applicability{Unread: "BB 04/05/2027"}},                    // 4 May or 5 April
		{"BB 05/05/2027", Applicability{BestBefore: []DateRange{day("2027-05-05")}}}, // both readings agree
		{"BB 27/04/15", Applicability{Unread: "BB 27/04/15"}},                        // 2027-04-15 or 2015-04-27
		{"BB (YY/MM/DD): 27/04/15", Applicability{BestBefore: []DateRange{day("2027-04-15")}}},
		{"Meilleur avant (JJ/MM/AA) 15/04/27", Applicability{BestBefore: []DateRange{day("2027-04-15")}}},
		{"Best Before: 08/20/15", Applicability{BestBefore: []DateRange{day("2015-08-20")}}}, // only month-day-year is a day
		{"BB 31/02/2027", Applicability{Unread: "BB 31/02/2027"}},
		{"Exp. 2027-03", Applicability{BestBefore: []DateRange{month("2027-03-01", "2027-03-31")}}},
		{"Exp May 2015", Applicability{BestBefore: []DateRange{month("2015-05-01", "2015-05-31")}}},
		{"Best if Used By: JUL. 31, 2015", Applicability{BestBefore: []DateRange{day("2015-07-31")}}},
		{"expiration date of 15NOV2018", Applicability{BestBefore: []DateRange{day("2018-11-15")}}},
		{"Best before 2027-04-01 to 2027-04-30", Applicability{BestBefore: []DateRange{month("2027-04-01", "2027-04-30")}}},
		{"Best before dates up to and including 2021-08-13", Applicability{BestBefore: []DateRange{{OpenFrom, "2021-08-13"}}}},
		{"Best before between 2027-05-01 and 2027-04-01", Applicability{Unread: "Best before between 2027-05-01 and 2027-04-01"}},
		// French.
		{"Meilleur avant 2027/04/15", Applicability{BestBefore: []DateRange{day("2027-04-15")}}},
		{"Lot 12345 Meilleur avant 15 juillet 2027", Applicability{Lots: []string{"12345"}, BestBefore: []DateRange{day("2027-07-15")}}},
		{"Meilleur avant 30 décembre 2011", Applicability{BestBefore: []DateRange{day("2011-12-30")}}},
		{"Numéro de lot 1234; Date de péremption 2027-01", Applicability{Lots: []string{"1234"}, BestBefore: []DateRange{month("2027-01-01", "2027-01-31")}}},
		{"Tous les codes", Applicability{AllCodes: true}},
		{"Tous les lots.", Applicability{AllCodes: true}},
		{"Commençant par 0235278", Applicability{LotPrefixes: []string{"0235278"}}},
		{"Aucun", Applicability{}},
		// Drugs and medical devices.
		{"DIN 02433230", Applicability{DINs: []string{"02433230"}}},
		{"DIN 1234", Applicability{Unread: "DIN 1234"}},
		{"243101O, 243110D, 253101D", Applicability{Lots: []string{"243101O", "243110D", "253101D"}}},
		{"All lots.", Applicability{AllCodes: true}},
		{"No market authorization", Applicability{}},
		{"Lot #: FA2B6004A Expiry: 2029/04/19", Applicability{Lots: []string{"FA2B6004A"}, BestBefore: []DateRange{day("2029-04-19")}}},
		{">50 Lot Numbers. Contact MFG", Applicability{Unread: ">50 Lot Numbers. Contact MFG"}},
		{"More than 10 numbers, contact manufacturer.", Applicability{Unread: "More than 10 numbers, contact manufacturer."}},
		{"Lot # 26025260", Applicability{Lots: []string{"26025260"}}},
		{"v1.0.3", Applicability{Lots: []string{"V1.0.3"}}},
		{"REF ABC-1234", Applicability{Models: []string{"ABC-1234"}}},
		{"Model or catalogue number: A30034AC", Applicability{Models: []string{"A30034AC"}}},
		{"Cat. No. 1011-9000-000", Applicability{Models: []string{"1011-9000-000"}}},
		{"Modèle 8844101", Applicability{Models: []string{"8844101"}}},
		{"Jamp-Atorvastatin 40 mg tablets (lot MHC1403A, expiry 2023-09-30)",
			Applicability{Lots: []string{"MHC1403A"}, BestBefore: []DateRange{day("2023-09-30")}, Unread: "Jamp-Atorvastatin 40 mg tablets"}},
		// Consumer products.
		{"Model AB-1234", Applicability{Models: []string{"AB-1234"}}},
		{"Part numbers S214, S215, S234 and S235", Applicability{Models: []string{"S214", "S215", "S234", "S235"}}},
		{"Serial numbers 1000 to 1999", Applicability{Serials: []string{"1000 to 1999"}}},
		{"Numéros de série SN100 à SN199", Applicability{Serials: []string{"SN100 à SN199"}}},
		{"KHK 190026-001", Applicability{Lots: []string{"KHK 190026-001"}}},
		{"18024 18037 18043", Applicability{Lots: []string{"18024", "18037", "18043"}}},
		{"lot 1n81h; LOT 1N81H", Applicability{Lots: []string{"1N81H"}}},
		{"", Applicability{}},
	} {
		tc.want.Text = tc.in
		got := ParseApplicability(tc.in)
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(tc.want)
		if string(g) != string(w) {
			t.Errorf("ParseApplicability(%q)\n got %s\nwant %s", tc.in, g, w)
		}
	}
}

func TestCovers(t *testing.T) {
	for _, tc := range []struct {
		codes, lot, date string
		covered, decided bool
		why              string // a part of the sentence
	}{
		// Covered.
		{"Best Before 04/2027 Lot 60D0924", "60D0924", "", true, true, "is among the codes"},
		{"Best Before 04/2027 Lot 60D0924", "60d 0924", "2027-04-15", true, true, "is among the codes"},
		{"Best Before 04/2027 Lot 60D0924", "", "2027-04-15", true, true, "among the best-before dates"},
		{"Best Before 04/2027 Lot 60D0924", "", "04/2027", true, true, "among the best-before dates"},
		{"BB: 22-JULY-26", "", "22-JULY-26", true, true, "among the best-before dates"},
		{"ESC-26-238 10/02/27", "ESC26238", "", true, true, "is among the codes"},
		{"Starting with 0216911", "0216911004", "", true, true, "is among the codes"},
		{"Serial numbers 1000 to 1999", "1500", "", true, true, "is among the codes"},
		{"Numéros de série SN100 à SN199", "sn150", "", true, true, "is among the codes"},
		{"All codes where milk is not declared on the label", "", "", true, true, "where milk is not declared"},
		{"Tous les codes", "X1", "2030-01-01", true, true, "every code"},
		{"Model 2551", "2551", "", true, true, "model or drug number"},
		{"DIN 02433230", "02433230", "", true, true, "model or drug number"},
		{"Lot 123; >50 Lot Numbers. Contact MFG", "123", "", true, true, "is among the codes"},
		// Not covered.
		{"Best Before 04/2027 Lot 60D0924", "60D0925", "", false, true, "is not among the codes"},
		{"Best Before 04/2027 Lot 60D0924", "60D0925", "2028-01-01", false, true, "is not among the codes"},
		{"BB: 22-JULY-26", "", "2026-07-23", false, true, "is not among the best-before dates"},
		{"Starting with 0216911", "0216912004", "", false, true, "is not among the codes"},
		{"Serial numbers 1000 to 1999", "2000", "", false, true, "is not among the codes"},
		{"Serial numbers 1000 to 1999", "A1500", "", false, true, "is not among the codes"},
		// Undecided.
		{"Best Before 04/2027 Lot 60D0924", "", "", false, false, "Give the lot"},
		{"Best Before 04/2027 Lot 60D0924", "60D0924", "2028-01-01", false, false, "is listed, but not the date"},
		{"Best Before 04/2027 Lot 60D0924", "60D0925", "2027-04-15", false, false, "is listed, but not lot"},
		{"Best Before 04/2027 Lot 60D0924", "", "2028-01-01", false, false, "it lists lots too"},
		{"Best Before 04/2027 Lot 60D0924", "", "2027-03-15 ", false, false, "it lists lots too"},
		{"Lot 60D0924", "", "2027-04-15", false, false, "give the lot"},
		{"BB: 22-JULY-26", "L1", "", false, false, "give the date"},
		{"BB: 22-JULY-26", "", "2026-07", false, false, "spans days"},
		{"BB: 22-JULY-26", "", "10/02/27", false, false, "could not be read"},
		{"BB: 22-JULY-26", "", "someday", false, false, "could not be read"},
		{">50 Lot Numbers. Contact MFG", "123", "", false, false, "could not be read"},
		{"ESC-26-238 10/02/27", "ESC-26-239", "", false, false, "which could not be read"},
		{"77722; More than 10 numbers, contact manufacturer.", "77723", "", false, false, "which could not be read"},
		{"Model 2551", "L2301", "", false, false, "compare that number"},
		{"Harvest location: PEI 1Q; Grade: Choice", "1Q", "", false, false, "name no lot"},
		{"", "1", "", false, false, "prints no codes"},
		{"Lot 1", "", "", false, false, "Give the lot or the best-before date"},
	} {
		a := ParseApplicability(tc.codes)
		covered, decided, why := a.Covers(tc.lot, tc.date)
		if covered != tc.covered || decided != tc.decided || !strings.Contains(why, tc.why) {
			t.Errorf("ParseApplicability(%q).Covers(%q, %q) = %v, %v, %q; want %v, %v, a sentence with %q",
				tc.codes, tc.lot, tc.date, covered, decided, why, tc.covered, tc.decided, tc.why)
		}
		if covered && !decided {
			t.Errorf("%q Covers(%q, %q): covered but undecided", tc.codes, tc.lot, tc.date)
		}
		if !strings.HasSuffix(why, ".") || why[0] < 'A' && why[0] != '\'' || why[0] > 'Z' && why[0] != '\'' {
			t.Errorf("%q Covers(%q, %q): why %q is no sentence", tc.codes, tc.lot, tc.date, why)
		}
	}
}

// TestAssembleApplicability checks that assembling gives every product
// that prints codes its applicability, read from its lot codes, leaves a
// product without codes alone, and does not touch the source's record.
func TestAssembleApplicability(t *testing.T) {
	src := &Record{
		RecordID: "hc-1", RecallID: "1", RecallType: "food", Agency: "CFIA", Status: StatusActive,
		EventDate: "2026-07-01", RecallDate: "2026-07-01", Translations: Translations{EN: &Translation{Title: "Oysters"}},
		ProductList: []Product{
			{Name: "Oysters", LotCodes: []string{"Harvest location: PEI 1Q", "BB: 22-JULY-26"}},
			{Name: "Mussels"},
		},
	}
	recs, problems := Assemble(time.Date(2026, 7, 2, 0, 0, 0, 0, time.UTC), []*Record{src})
	if len(problems) != 0 || len(recs) != 1 {
		t.Fatalf("Assemble: %v %v", recs, problems)
	}
	got := recs[0].ProductList
	if a := got[0].Applicability; a == nil || a.Text != "Harvest location: PEI 1Q; BB: 22-JULY-26" || len(a.BestBefore) != 1 || a.BestBefore[0] != day("2026-07-22") {
		t.Errorf("the oysters' applicability is %+v", got[0].Applicability)
	}
	if got[1].Applicability != nil {
		t.Errorf("a product without codes got %+v", got[1].Applicability)
	}
	if src.ProductList[0].Applicability != nil {
		t.Error("assembling changed the source's own record")
	}
}

// FuzzParseApplicability feeds arbitrary text to the parser and to
// Covers: no panic, the text kept, every date a real day, ranges in
// order, DINs of eight digits, and what Covers says one sentence.
func FuzzParseApplicability(f *testing.F) {
	for _, s := range []string{
		"Best Before 04/2027 Lot 60D0924", "4-281-25 BB 4/27", "BB: 22-JULY-26", "All codes where milk is not declared",
		"All lots.", ">50 Lot Numbers. Contact MFG", "Starting with 0216911", "Meilleur avant 15 juillet 2027; Tous les codes",
		"BB (YY/MM/DD): 27/04/15", "ESC-26-238 10/02/27; ESC-26-238 11/02/27", "Serial numbers 1000 to 1999", "DIN 02433230",
		"Best before dates up to and including 2021-08-13", "between 10/01/13 and 11/10/13", "15NOV2018", "Lot ( : # ,",
		"BB 0000/00/00 31-FE-99 12/31 MA 2199-12-31", "\xff\xfe lot \u00a0 (s) ’", "Modèle À 1 - 2 au 3",
	} {
		f.Add(s, "60D0924", "2027-04-15")
	}
	f.Fuzz(func(t *testing.T, text, lot, date string) {
		a := ParseApplicability(text)
		if a.Text != text {
			t.Fatalf("Text %q, want %q", a.Text, text)
		}
		for _, r := range a.BestBefore {
			if !ValidDate(r.From) || !ValidDate(r.To) || r.From > r.To {
				t.Fatalf("%q: range %+v", text, r)
			}
		}
		for _, d := range a.DINs {
			if len(d) != 8 || !IsDigits(d) {
				t.Fatalf("%q: DIN %q", text, d)
			}
		}
		covered, decided, why := a.Covers(lot, date)
		if covered && !decided || why == "" || !strings.HasSuffix(why, ".") {
			t.Fatalf("%q Covers(%q, %q) = %v, %v, %q", text, lot, date, covered, decided, why)
		}
	})
}

// TestParseLabelledCodes checks that a code printed under a column's
// label is read as that label says, the live pages' cells as printed
// (../shared/real, the parsed pages' affected products), and that a
// code's own label, an "all lots" or an unreadable cell still reads as it
// does alone.
func TestParseLabelledCodes(t *testing.T) {
	for _, tc := range []struct {
		in   []LabelledCode
		want Applicability // Text is filled in
	}{
		{[]LabelledCode{{"Model or catalogue number", "A30034AC"}, {"Lot or serial number", "NGKT2492"}},
			Applicability{Models: []string{"A30034AC"}, Lots: []string{"NGKT2492"}}},
		{[]LabelledCode{{"Model", "KHK 190026-001"}, {"Serial numbers", "M3B1G5"}},
			Applicability{Models: []string{"KHK 190026-001"}, Serials: []string{"M3B1G5"}}},
		{[]LabelledCode{{"Part number", "196017"}, {"Lot number", "All lots"}}, Applicability{Models: []string{"196017"}, AllCodes: true}},
		{[]LabelledCode{{"Style number", "3528-4828-2601"}}, Applicability{Models: []string{"3528-4828-2601"}}},
		{[]LabelledCode{{"Lot number", "243101O, 243110D, 253101D"}}, Applicability{Lots: []string{"243101O", "243110D", "253101D"}}},
		{[]LabelledCode{{"Packaging date", "2026-05-07"}, {"Lot number", "1006543"}}, Applicability{Lots: []string{"1006543"}}},
		{[]LabelledCode{{"Model or catalogue number", "Not applicable"}, {"Lot or serial number", "More than 10 numbers, contact manufacturer."}},
			Applicability{Unread: "More than 10 numbers, contact manufacturer."}},
		// A code's own label wins over its column's: the trimmed food page
		// put its codes in the UPC column.
		{[]LabelledCode{{"UPC", "Best before: JUN/14/2028"}, {"UPC", "LOT: JSCA26005"}, {"UPC", "64420000244"}},
			Applicability{Lots: []string{"JSCA26005"}, BestBefore: []DateRange{day("2028-06-14")}}},
		{[]LabelledCode{{"Lot or serial number", "Lot # 26025260"}}, Applicability{Lots: []string{"26025260"}}},
		// No label, or one the parser does not know: read as printed.
		{[]LabelledCode{{"", "Best Before 04/2027 Lot 60D0924"}}, Applicability{Lots: []string{"60D0924"}, BestBefore: []DateRange{month("2027-04-01", "2027-04-30")}}},
		{[]LabelledCode{{"Colour", "A30034AC"}}, Applicability{Lots: []string{"A30034AC"}}},
	} {
		var texts []string
		for _, c := range tc.in {
			texts = append(texts, c.Text)
		}
		tc.want.Text = strings.Join(texts, "; ")
		got := ParseLabelledCodes(tc.in)
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(tc.want)
		if string(g) != string(w) {
			t.Errorf("ParseLabelledCodes(%q)\n got %s\nwant %s", tc.in, g, w)
		}
	}
	if !KnownCodeLabel("Lot # ") || !KnownCodeLabel("Numéro de lot") || KnownCodeLabel("Code(s)") || KnownCodeLabel("Colour") {
		t.Error("KnownCodeLabel")
	}
}

// TestAllCodesCondition checks which printed "all codes" parts put a
// condition on the units they cover.
func TestAllCodesCondition(t *testing.T) {
	for text, cond := range map[string]bool{
		"All codes where wheat and egg are not declared on the label": true,
		"All units sold up to and including 2021-08-13":               true,
		"All lot codes": false, "All lots.": false, "Tous les codes": false, "All codes": false, "All best before dates": false,
		"Lot 123": false,
	} {
		a := ParseApplicability(text)
		if got := a.AllCodesCondition(); (got != "") != cond || cond && got != text {
			t.Errorf("AllCodesCondition of %q = %q, want a condition: %v", text, got, cond)
		}
	}
}
