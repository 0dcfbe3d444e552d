package hcdump

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
)

func TestAbsoluteURL(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"https://recalls-rappels.canada.ca/en/alert-recall/x", "https://recalls-rappels.canada.ca/en/alert-recall/x", true},
		{"http://healthycanadians.gc.ca/recall-alert-rappel-avis/hc-sc/2012/12345r-eng.php", "http://healthycanadians.gc.ca/recall-alert-rappel-avis/hc-sc/2012/12345r-eng.php", true},
		{"/en/alert-recall/brand-x-cookies-recalled", "https://recalls-rappels.canada.ca/en/alert-recall/brand-x-cookies-recalled", true},
		{"/fr/node/73841", "https://recalls-rappels.canada.ca/fr/node/73841", true},
		{"en/alert-recall/x", "https://recalls-rappels.canada.ca/en/alert-recall/x", true},
		{"//recalls-rappels.canada.ca/fr/avis-rappel/x", "https://recalls-rappels.canada.ca/fr/avis-rappel/x", true},
		{"recalls-rappels.canada.ca/en/alert-recall/x", "https://recalls-rappels.canada.ca/en/alert-recall/x", true},
		{"wwwapps.tc.gc.ca/Saf-Sec-Sur/7/VRDB-BDRV/search-recherche/detail.aspx?lang=eng&rn=2018123", "https://wwwapps.tc.gc.ca/Saf-Sec-Sur/7/VRDB-BDRV/search-recherche/detail.aspx?lang=eng&rn=2018123", true},
		{"recall.php", "https://recalls-rappels.canada.ca/recall.php", true},
		{"", "", true},
		{"javascript:alert(1)", "", false},
		{"mailto:info@example.ca", "", false},
		{"https:///no-host", "", false},
		{"%zz", "", false},
	} {
		got, ok := absoluteURL(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("absoluteURL(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParseIssue(t *testing.T) {
	for _, tc := range []struct {
		in                 string
		allergens, unknown []string
		en, fr             string // the hazard descriptions, "" for the Issue as written
	}{
		{"Egg", []string{"egg"}, nil, "Allergen: Egg", "Allergène : Egg"},
		{"Egg - Soy - Milk", []string{"egg", "soy", "milk"}, nil, "Allergen: Egg, Soy, Milk", "Allergène : Egg, Soy, Milk"},
		{"Gluten - Wheat - Sesame seeds - Milk", []string{"gluten", "wheat", "sesame", "milk"}, nil, "Allergen: Gluten, Wheat, Sesame seeds, Milk", ""},
		{"Peanut - Crustacean and shellfish", []string{"peanut", "crustacean", "shellfish"}, nil, "Allergen: Peanut, Crustacean and shellfish", ""},
		{"Œufs - Soja - Lait", []string{"egg", "soy", "milk"}, nil, "Allergen: Œufs, Soja, Lait", "Allergène : Œufs, Soja, Lait"},
		{"Salmonella", nil, nil, "Microbial contamination: Salmonella", "Contamination microbienne : Salmonella"},
		{"E. Coli - non-pathogenic - Staphylococcus aureus", nil, nil, "Microbial contamination: E. Coli - non-pathogenic, Staphylococcus aureus", ""},
		{"Extraneous Material", nil, nil, "Extraneous material", "Matières étrangères"},
		{"Non harmful (quality or spoilage)", nil, nil, "Non harmful (quality or spoilage)", ""},
		{"Salmonella - Egg", []string{"egg"}, nil, "Microbial contamination: Salmonella; Allergen: Egg", ""},
		// The 2023 lists, joined by ", ".
		{"Egg, Milk", []string{"egg", "milk"}, nil, "Allergen: Egg, Milk", ""},
		{"Lupin - Milk", []string{"milk"}, []string{"Lupin"}, "", ""},
		{"Performance", nil, []string{"Performance"}, "", ""},
		{"The recalled products contain peanut, an allergen not declared on the label.", nil, nil, "", ""},
		{"", nil, nil, "", ""},
	} {
		got := parseIssue(tc.in)
		if !slices.Equal(got.allergens, tc.allergens) || !slices.Equal(got.unknown, tc.unknown) {
			t.Errorf("parseIssue(%q) = %+v; want allergens %q, unknown %q", tc.in, got, tc.allergens, tc.unknown)
		}
		if en := got.describe(rappel.LangEN); en != tc.en {
			t.Errorf("parseIssue(%q) describes %q in English, want %q", tc.in, en, tc.en)
		}
		if fr := got.describe(rappel.LangFR); tc.fr != "" && fr != tc.fr {
			t.Errorf("parseIssue(%q) describes %q in French, want %q", tc.in, fr, tc.fr)
		}
	}
}

func TestUndeclared(t *testing.T) {
	for title, want := range map[string]string{
		"Braised abalone in brown sauce recalled due to undeclared egg":                                                                 "egg",
		"North Shore Fishery brand Frozen Breaded Shrimp Patties recalled due to undeclared egg, soy and milk":                          "egg,soy,milk",
		"Cucina & Amore brand Pesto Alla Genovese Basil recalled due to undeclared Brazil nuts, milk, and pine nuts":                    "tree_nut,milk",
		"Delmar Foods brand Buttermilk Ranch Dressing recalled due to undeclared mustard and anchovy":                                   "mustard,fish",
		"Nissin brand Big Cup Noodle recalled due to undeclared shrimp and Nissin brand Curry Flavor recalled due to undeclared peanut": "crustacean,peanut",
		"Brand Y Cookies recalled due to Salmonella":                                                                                    "",
		"Barres de marque X rappelées en raison d'arachides non déclarées":                                                              "peanut",
		"Biscuits de marque Y rappelés en raison de lait non déclaré et de moutarde non déclarée":                                       "milk,mustard",
		"Pesto de marque Z rappelé en raison de la présence non déclarée de lait et d'œufs":                                             "milk,egg",
		"Soupe rappelée en raison de la présence de morceaux de verre":                                                                  "",
	} {
		if got := strings.Join(undeclared(title), ","); got != want {
			t.Errorf("undeclared(%q) = %q, want %q", title, got, want)
		}
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		org, archived, category string
		want                    kind
		leaves                  string
		problem                 bool
	}{
		{"CFIA", "0", "Nuts, grains, and seeds", kind{rappel.AgencyCFIA, rappel.TypeFood}, "Nuts, grains, and seeds", false},
		{"ACIA", "0", "Produits laitiers", kind{rappel.AgencyCFIA, rappel.TypeFood}, "Produits laitiers", false},
		{"TC", "0", "SUV - Minivan", kind{rappel.AgencyTransportCanada, rappel.TypeVehicle}, "SUV|Minivan", false},
		{"TC", "0", "Truck - Med. & H.D. - Light Truck & Van - SUV", kind{rappel.AgencyTransportCanada, rappel.TypeVehicle}, "Truck - Med. & H.D.|Light Truck & Van|SUV", false},
		{"Medical devices", "0", "Ear, nose and throat - General hospital and personal use", kind{rappel.AgencyHealthCanada, rappel.TypeMedicalDevice}, "Ear, nose and throat|General hospital and personal use", false},
		{"Marketed health products", "0", "", kind{rappel.AgencyHealthCanada, rappel.TypeHealthProduct}, "", false},
		{"Communications and Public Affairs Branch", "0", "Drugs - Medical devices", kind{rappel.AgencyHealthCanada, rappel.TypeMedicalDevice}, "Drugs|Medical devices", false},
		{"Communications and Public Affairs Branch", "0", "", kind{rappel.AgencyHealthCanada, rappel.TypeHealthProduct}, "", false},
		// Until 2024: full names, full paths joined by ", ".
		{"Canadian Food Inspection Agency", "No", "Food - Nuts, grains, and seeds, Food - Dairy", kind{rappel.AgencyCFIA, rappel.TypeFood}, "Nuts, grains, and seeds|Dairy", false},
		{"Transport Canada", "Yes", "Vehicles - Car, Vehicles - SUV", kind{rappel.AgencyTransportCanada, rappel.TypeVehicle}, "Car|SUV", false},
		{"Transport Canada", "No", "Vehicles - Truck - Med. & H.D.", kind{rappel.AgencyTransportCanada, rappel.TypeVehicle}, "Truck - Med. & H.D.", false},
		{"Health Canada", "No", "Medical devices - Cardiovascular", kind{rappel.AgencyHealthCanada, rappel.TypeMedicalDevice}, "Cardiovascular", false},
		{"Health Canada", "No", "Consumer products - Toys and games", kind{rappel.AgencyHealthCanada, rappel.TypeConsumerProduct}, "Toys and games", false},
		{"Health Canada", "No", "Health products - Drugs", kind{rappel.AgencyHealthCanada, rappel.TypeHealthProduct}, "Drugs", false},
		{"Health Canada", "0", "Cannabis", kind{rappel.AgencyHealthCanada, rappel.TypeCannabis}, "Cannabis", false},
		{"Santé Canada", "Non", "Instruments médicaux - Cardiovasculaire", kind{rappel.AgencyHealthCanada, rappel.TypeMedicalDevice}, "Cardiovasculaire", false},
		// Organizations the dump has never used: kept, typed by rule.
		{"Cannabis Legalization and Regulation Branch", "0", "Cannabis", kind{rappel.AgencyHealthCanada, rappel.TypeCannabis}, "Cannabis", true},
		{"Food Safety Directorate", "0", "Dairy", kind{rappel.AgencyCFIA, rappel.TypeFood}, "Dairy", true},
		{"Ministry of Magic", "0", "Medical devices", kind{rappel.AgencyHealthCanada, rappel.TypeMedicalDevice}, "Medical devices", true},
		{"Ministry of Magic", "0", "Car - SUV", kind{rappel.AgencyTransportCanada, rappel.TypeVehicle}, "Car|SUV", true},
		{"", "0", "", kind{rappel.AgencyHealthCanada, rappel.TypeHealthProduct}, "", true},
	} {
		n := &notice{lang: langEN, row: 1, nid: "1", org: tc.org, archived: tc.archived, category: tc.category}
		got, _, leaves, problem := classify(n)
		if got != tc.want || strings.Join(leaves, "|") != tc.leaves || (problem != "") != tc.problem {
			t.Errorf("classify(%q, %q, %q) = %+v, %q, problem %q; want %+v, %q, problem %v", tc.org, tc.archived, tc.category, got, leaves, problem, tc.want, tc.leaves, tc.problem)
		}
		if tc.problem && tc.org != "" && !strings.Contains(problem, strconv.Quote(tc.org)) {
			t.Errorf("the problem %q does not name the organization %q", problem, tc.org)
		}
	}
}

func TestTransportIssue(t *testing.T) {
	for issue, system := range map[string]bool{
		"Brakes": true, "Latches/Locks/Linkages": true, "Système d'alimentation en carburant": true,
		"Brake fluid may leak from the master cylinder, reducing braking.": false, "": false,
	} {
		if got := isSystem(issue); got != system {
			t.Errorf("isSystem(%q) = %v, want %v", issue, got, system)
		}
	}
}
