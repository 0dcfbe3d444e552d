package hcvocab

import (
	"slices"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
)

// TestDumpOrganizations checks every Organization of the vocabulary, entry
// by entry: each is listed here with what it must say, and the table holds
// no other.
func TestDumpOrganizations(t *testing.T) {
	hc := rappel.AgencyHealthCanada
	want := map[string]DumpOrganization{
		"CFIA": {rappel.AgencyCFIA, rappel.TypeFood, DumpEra2024}, "ACIA": {rappel.AgencyCFIA, rappel.TypeFood, DumpEra2024},
		"TC":                      {rappel.AgencyTransportCanada, rappel.TypeVehicle, DumpEra2024},
		"Medical devices":         {hc, rappel.TypeMedicalDevice, DumpEra2024},
		"Instruments médicaux":    {hc, rappel.TypeMedicalDevice, DumpEra2024},
		"Consumer product safety": {hc, rappel.TypeConsumerProduct, DumpEra2024},
		"Sécurité des produits de consommation":                           {hc, rappel.TypeConsumerProduct, DumpEra2024},
		"Drugs and health products":                                       {hc, rappel.TypeHealthProduct, DumpEra2024},
		"Médicaments et produits de santé":                                {hc, rappel.TypeHealthProduct, DumpEra2024},
		"Marketed health products":                                        {hc, rappel.TypeHealthProduct, DumpEra2024},
		"Produits de santé commercialisés":                                {hc, rappel.TypeHealthProduct, DumpEra2024},
		"Controlled substances and cannabis":                              {hc, rappel.TypeCannabis, DumpEra2024},
		"Substances contrôlées et cannabis":                               {hc, rappel.TypeCannabis, DumpEra2024},
		"Communications and Public Affairs Branch":                        {hc, "", DumpEra2024},
		"Direction générale des communications et des affaires publiques": {hc, "", DumpEra2024},
		"Canadian Food Inspection Agency":                                 {rappel.AgencyCFIA, rappel.TypeFood, DumpEra2023},
		"Agence canadienne d'inspection des aliments":                     {rappel.AgencyCFIA, rappel.TypeFood, DumpEra2023},
		"Transport Canada":                                                {rappel.AgencyTransportCanada, rappel.TypeVehicle, DumpEra2023},
		"Transports Canada":                                               {rappel.AgencyTransportCanada, rappel.TypeVehicle, DumpEra2023},
		"Health Canada":                                                   {hc, "", DumpEra2023},
		"Santé Canada":                                                    {hc, "", DumpEra2023},
	}
	for name, w := range want {
		for _, written := range []string{name, strings.ToUpper(name), " " + name + " "} {
			if got, ok := LookupDumpOrganization(written); !ok || got != w {
				t.Errorf("LookupDumpOrganization(%q) = %+v, %v; want %+v", written, got, ok, w)
			}
		}
		if !rappel.Agencies.Has(w.Agency) || w.RecallType != "" && !rappel.RecallTypes.Has(w.RecallType) {
			t.Errorf("%q: %+v is outside the vocabularies", name, w)
		}
	}
	if len(dumpOrganizations) != len(want) {
		t.Errorf("the vocabulary has %d organizations, this test %d: test each new one", len(dumpOrganizations), len(want))
	}
	for _, name := range []string{"Ministry of Magic", "", "Health", "Transport"} {
		if _, ok := LookupDumpOrganization(name); ok {
			t.Errorf("LookupDumpOrganization(%q) knows it", name)
		}
	}
}

func TestClassifyDumpRow(t *testing.T) {
	for _, tc := range []struct {
		org, archived, category string
		want                    DumpRowKind
	}{
		{"TC", "0", "SUV - Minivan", DumpRowKind{rappel.AgencyTransportCanada, rappel.TypeVehicle, DumpEra2024, []string{"SUV", "Minivan"}, true, ""}},
		{"Transport Canada", "Yes", "Vehicles - Car, Vehicles - SUV", DumpRowKind{rappel.AgencyTransportCanada, rappel.TypeVehicle, DumpEra2023, []string{"Car", "SUV"}, true, ""}},
		{"Health Canada", "No", "Medical devices - Cardiovascular", DumpRowKind{rappel.AgencyHealthCanada, rappel.TypeMedicalDevice, DumpEra2023, []string{"Cardiovascular"}, true, ""}},
		{"Health Canada", "No", "", DumpRowKind{rappel.AgencyHealthCanada, rappel.TypeHealthProduct, DumpEra2023, nil, true, ""}},
		{"Communications and Public Affairs Branch", "0", "Drugs - Medical devices", DumpRowKind{rappel.AgencyHealthCanada, rappel.TypeMedicalDevice, DumpEra2024, []string{"Drugs", "Medical devices"}, true, ""}},
		// Health Canada never files food: a food sector leaves the default.
		{"Health Canada", "No", "Food - Dairy", DumpRowKind{rappel.AgencyHealthCanada, rappel.TypeHealthProduct, DumpEra2023, []string{"Dairy"}, true, ""}},
		// Organizations the dump has never used; the era from Archived.
		{"Road Safety and Motor Vehicle Regulation", "0", "Car", DumpRowKind{rappel.AgencyTransportCanada, rappel.TypeVehicle, DumpEra2024, []string{"Car"}, false, "by its Category"}},
		{"Transport Canada - Road Safety", "No", "", DumpRowKind{rappel.AgencyTransportCanada, rappel.TypeVehicle, DumpEra2023, nil, false, "by its name"}},
		{"Food Safety Directorate", "0", "", DumpRowKind{rappel.AgencyCFIA, rappel.TypeFood, DumpEra2024, nil, false, "by its name"}},
		{"Ministry of Magic", "Yes", "Consumer products - Wands", DumpRowKind{rappel.AgencyHealthCanada, rappel.TypeConsumerProduct, DumpEra2023, []string{"Wands"}, false, "by its Category"}},
		{"Ministry of Magic", "", "Wands", DumpRowKind{rappel.AgencyHealthCanada, rappel.TypeHealthProduct, DumpEra2024, []string{"Wands"}, false, "by default"}},
	} {
		got := ClassifyDumpRow(tc.org, tc.archived, tc.category)
		if got.Agency != tc.want.Agency || got.RecallType != tc.want.RecallType || got.Era != tc.want.Era || !slices.Equal(got.Leaves, tc.want.Leaves) ||
			got.Known != tc.want.Known || got.TypedBy != tc.want.TypedBy {
			t.Errorf("ClassifyDumpRow(%q, %q, %q) = %+v, want %+v", tc.org, tc.archived, tc.category, got, tc.want)
		}
	}
}

func TestDumpArchived(t *testing.T) {
	for _, tc := range []struct {
		in       string
		archived bool
		era      DumpEra
		ok       bool
	}{
		{"0", false, DumpEra2024, true}, {"1", true, DumpEra2024, true},
		{"No", false, DumpEra2023, true}, {"Yes", true, DumpEra2023, true}, {"yes", true, DumpEra2023, true},
		{"Non", false, DumpEra2023, true}, {"Oui", true, DumpEra2023, true},
		{"", false, DumpEra2024, false}, {"Maybe", false, DumpEra2024, false}, {"2", false, DumpEra2024, false},
	} {
		archived, era, ok := DumpArchived(tc.in)
		if archived != tc.archived || ok != tc.ok || ok && era != tc.era {
			t.Errorf("DumpArchived(%q) = %v, %v, %v; want %v, %v, %v", tc.in, archived, era, ok, tc.archived, tc.era, tc.ok)
		}
	}
}

// TestDumpIssueLabels checks every Issue label of the vocabulary, entry by
// entry: each is listed here with its hazard type and allergens, and the
// table holds no other.
func TestDumpIssueLabels(t *testing.T) {
	a := func(allergens ...string) IssueLabel { return IssueLabel{HazardAllergen, allergens} }
	m, x, c, none := IssueLabel{Hazard: HazardMicrobial}, IssueLabel{Hazard: HazardExtraneous}, IssueLabel{Hazard: HazardChemical}, IssueLabel{}
	want := map[string]IssueLabel{
		// The real dump's labels (June 2025), English.
		"Egg": a("egg"), "Milk": a("milk"), "Wheat": a("wheat"), "Soy": a("soy"), "Fish": a("fish"),
		"Mustard": a("mustard"), "Gluten": a("gluten"), "Sesame seeds": a("sesame"), "Peanut": a("peanut"),
		"Tree nut": a("tree_nut"), "Sulphites": a("sulphites"), "Crustacean and shellfish": a("crustacean", "shellfish"),
		"Salmonella": m, "Listeria": m, "Norovirus": m, "E. Coli - non-pathogenic": m, "E. Coli - other pathogenic": m,
		"Staphylococcus aureus": m, "Extraneous Material": x, "Chemical": c,
		"Other": none, "Contamination": none, "Non harmful (quality or spoilage)": none,
		// Other spellings and labels of the same kinds.
		"Sesame": a("sesame"), "Peanuts": a("peanut"), "Tree nuts": a("tree_nut"), "Sulfites": a("sulphites"),
		"Crustacean": a("crustacean"), "Crustaceans": a("crustacean"), "Shellfish": a("shellfish"),
		"Allergen": a(), "Undeclared allergen": a(),
		"Listeria monocytogenes": m, "E. coli O157:H7": m, "E. coli": m, "Clostridium botulinum": m,
		"Hepatitis A": m, "Cronobacter": m, "Bacillus cereus": m, "Campylobacter": m, "Cyclospora": m,
		"Mould": m, "Microbial contamination": m,
		// French.
		"Œufs": a("egg"), "Œuf": a("egg"), "Lait": a("milk"), "Blé": a("wheat"), "Soja": a("soy"),
		"Poisson": a("fish"), "Moutarde": a("mustard"), "Graines de sésame": a("sesame"), "Arachides": a("peanut"),
		"Arachide": a("peanut"), "Noix": a("tree_nut"), "Fruits à coque": a("tree_nut"),
		"Crustacés et mollusques": a("crustacean", "shellfish"), "Crustacés": a("crustacean"), "Mollusques": a("shellfish"),
		"Allergène": a(), "Allergène non déclaré": a(),
		"Salmonelle": m, "E. coli - non pathogène": m, "E. coli - autre pathogène": m, "Hépatite A": m,
		"Moisissures": m, "Contamination microbienne": m,
		"Matières étrangères": x, "Corps étrangers": x, "Chimique": c,
		"Autre": none, "Non nocif (qualité ou altération)": none,
		// Real rows of 2023 to 2026 (TestNormalize_RealLabels).
		"Vibrio parahaemolyticus": m, "Marine Biotoxin": c,
		"Labelling and packaging": IssueLabel{Hazard: HazardLabelling},
		"Nutrition":               IssueLabel{Hazard: HazardNutrition}, "Nutrition Issue": IssueLabel{Hazard: HazardNutrition},
		"Tampering": IssueLabel{Hazard: HazardTampering},
	}
	for label, w := range want {
		got, ok := LookupIssueLabel(label)
		if !ok || got.Hazard != w.Hazard || !slices.Equal(got.Allergens, w.Allergens) {
			t.Errorf("LookupIssueLabel(%q) = %+v, %v; want %+v", label, got, ok, w)
		}
		for _, al := range got.Allergens {
			if !rappel.Allergens.Has(al) {
				t.Errorf("%q names %q, outside the allergen vocabulary", label, al)
			}
		}
		if _, ok := HazardNames[got.Hazard]; got.Hazard != "" && !ok {
			t.Errorf("%q has the hazard type %q, which has no name", label, got.Hazard)
		}
		// Each label stays one label in an Issue, however it is joined.
		if labels := SplitIssue(label + " - Milk"); len(labels) != 2 || labels[0] != label {
			t.Errorf("SplitIssue(%q) = %q", label+" - Milk", labels)
		}
	}
	if len(dumpIssueLabels) != len(want) {
		t.Errorf("the vocabulary has %d Issue labels, this test %d: test each new one", len(dumpIssueLabels), len(want))
	}
	// Every allergen of the API's vocabulary has a label.
	for _, al := range rappel.Allergens {
		if !slices.ContainsFunc(dumpIssueLabelValues(), func(l IssueLabel) bool { return slices.Contains(l.Allergens, al) }) {
			t.Errorf("no Issue label names %q", al)
		}
	}
}

func dumpIssueLabelValues() []IssueLabel {
	var out []IssueLabel
	for _, l := range dumpIssueLabels {
		out = append(out, l)
	}
	return out
}

func TestSplitIssue(t *testing.T) {
	for in, want := range map[string]string{
		"Egg - Soy - Milk":                                   "Egg|Soy|Milk",
		"Gluten - Wheat - Sesame seeds - Milk":               "Gluten|Wheat|Sesame seeds|Milk",
		"E. Coli - non-pathogenic - Staphylococcus aureus":   "E. Coli - non-pathogenic|Staphylococcus aureus",
		"Staphylococcus aureus – E. Coli – other pathogenic": "Staphylococcus aureus|E. Coli - other pathogenic",
		"Egg, Milk":       "Egg|Milk",
		"Peanut":          "Peanut",
		"Tip-over hazard": "Tip-over hazard",
		"":                "",
		"Egg -  - Milk":   "Egg|Milk",
	} {
		if got := strings.Join(SplitIssue(in), "|"); got != want {
			t.Errorf("SplitIssue(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDumpCategories(t *testing.T) {
	for _, tc := range []struct {
		in     string
		era    DumpEra
		leaves string
		sector string
	}{
		{"SUV - Minivan", DumpEra2024, "SUV|Minivan", ""},
		{"Truck - Med. & H.D.", DumpEra2024, "Truck - Med. & H.D.", ""},
		{"Car - Light Truck & Van - SUV - Truck - Med. & H.D.", DumpEra2024, "Car|Light Truck & Van|SUV|Truck - Med. & H.D.", ""},
		{"Truck - Med. & H.D. - Light Truck & Van - SUV", DumpEra2024, "Truck - Med. & H.D.|Light Truck & Van|SUV", ""},
		{"Nuts, grains, and seeds", DumpEra2024, "Nuts, grains, and seeds", ""},
		{"Ear, nose and throat - General hospital and personal use", DumpEra2024, "Ear, nose and throat|General hospital and personal use", ""},
		{"Minibike/ Moped /Scooter", DumpEra2024, "Minibike/ Moped /Scooter", ""},
		{"Vehicles - Car, Vehicles - SUV", DumpEra2023, "Car|SUV", rappel.TypeVehicle},
		{"Food - Nuts, grains, and seeds", DumpEra2023, "Nuts, grains, and seeds", rappel.TypeFood},
		{"Food - Nuts, grains, and seeds, Food - Dairy", DumpEra2023, "Nuts, grains, and seeds|Dairy", rappel.TypeFood},
		{"Vehicles - Truck - Med. & H.D., Vehicles - SUV", DumpEra2023, "Truck - Med. & H.D.|SUV", rappel.TypeVehicle},
		{"Aliments - Noix, grains et graines", DumpEra2023, "Noix, grains et graines", rappel.TypeFood},
		{"Medical devices - Ear, nose and throat", DumpEra2023, "Ear, nose and throat", rappel.TypeMedicalDevice},
		{"Cannabis", DumpEra2023, "Cannabis", ""},
		{"Dairy", DumpEra2023, "Dairy", ""},
		{"", DumpEra2023, "", ""},
		{"", DumpEra2024, "", ""},
	} {
		leaves, sector := DumpCategories(tc.in, tc.era)
		if strings.Join(leaves, "|") != tc.leaves || sector != tc.sector {
			t.Errorf("DumpCategories(%q, %v) = %q, %q; want %q, %q", tc.in, tc.era, leaves, sector, tc.leaves, tc.sector)
		}
	}
}

// TestDumpCategoryTypes checks every category leaf of the vocabulary:
// each is one value in either era's list and after a sector, and names a
// recall type of the API.
func TestDumpCategoryTypes(t *testing.T) {
	for leaf, typ := range dumpCategoryTypes {
		if !rappel.RecallTypes.Has(typ) {
			t.Errorf("%q: type %q is outside the vocabulary", leaf, typ)
		}
		if got := DumpCategoryType([]string{strings.ToUpper(leaf)}, nil); got != typ {
			t.Errorf("DumpCategoryType(%q) = %q, want %q", leaf, got, typ)
		}
		if leaves, _ := DumpCategories(leaf+" - Other", DumpEra2024); len(leaves) != 2 || rappel.FoldKey(leaves[0]) != leaf {
			t.Errorf("%q is cut in the 2024 list %q", leaf, leaves)
		}
		if leaves, _ := DumpCategories("Food - "+leaf+", Food - Other", DumpEra2023); len(leaves) != 2 || rappel.FoldKey(leaves[0]) != leaf {
			t.Errorf("%q is cut in the 2023 list %q", leaf, leaves)
		}
	}
	for _, tc := range []struct {
		leaves  []string
		allowed []string
		want    string
	}{
		{[]string{"Drugs", "Medical devices"}, nil, rappel.TypeMedicalDevice},
		{[]string{"Cannabis", "Medical devices"}, nil, rappel.TypeCannabis},
		{[]string{"Consumer products"}, nil, rappel.TypeConsumerProduct},
		{[]string{"Instruments médicaux"}, nil, rappel.TypeMedicalDevice},
		{[]string{"Dairy"}, []string{rappel.TypeHealthProduct, rappel.TypeMedicalDevice}, ""},
		{[]string{"Other"}, nil, ""},
		{nil, nil, ""},
	} {
		if got := DumpCategoryType(tc.leaves, tc.allowed); got != tc.want {
			t.Errorf("DumpCategoryType(%q, %q) = %q, want %q", tc.leaves, tc.allowed, got, tc.want)
		}
	}
}

// TestDumpJoinedValues checks each value that holds a joiner stays whole
// in a list, in either era.
func TestDumpJoinedValues(t *testing.T) {
	for v := range dumpJoinedValues {
		for _, joiner := range []string{" - ", ", "} {
			got := SplitDumpList("bus"+joiner+v+joiner+"car", joiner)
			if len(got) != 3 || rappel.FoldKey(got[1]) != v {
				t.Errorf("SplitDumpList(%q) = %q: the value is cut", "bus"+joiner+v+joiner+"car", got)
			}
		}
	}
}

// FuzzSplitDumpList: whatever a list holds, its values are trimmed, not
// empty, and pieces of it in order.
func FuzzSplitDumpList(f *testing.F) {
	f.Add("Truck - Med. & H.D. - SUV - Minivan")
	f.Add("Food - Nuts, grains, and seeds, Food - Dairy")
	f.Add("E. Coli - non-pathogenic - Staphylococcus aureus")
	f.Add(" – — - ,, , ")
	f.Fuzz(func(t *testing.T, s string) {
		for _, joiner := range []string{" - ", ", "} {
			rest := s
			for _, v := range SplitDumpList(s, joiner) {
				if v == "" || v != strings.TrimSpace(v) {
					t.Fatalf("SplitDumpList(%q, %q) gives %q", s, joiner, v)
				}
				if joiner == ", " {
					i := strings.Index(rest, v)
					if i < 0 {
						t.Fatalf("SplitDumpList(%q, %q) gives %q, not in order", s, joiner, v)
					}
					rest = rest[i+len(v):]
				}
			}
		}
		DumpCategories(s, DumpEra2023)
		SplitIssue(s)
	})
}
