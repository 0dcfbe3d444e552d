package hcdump

import (
	"slices"
	"testing"

	"github.com/rappel-ca/rappel"
)

func TestHazardClass(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"Class 1", "class_1", true},
		{"Class 2", "class_2", true},
		{"Class III", "class_3", true},
		{"Type I", "class_1", true},
		{"Type II", "class_2", true},
		{"type iii", "class_3", true},
		{"Classe 2", "class_2", true},
		{"Classe III", "class_3", true},
		{"3", "class_3", true},
		{"Type I - Type II", "class_1", true},
		{"Type II – Type III", "class_2", true},
		{"Type III - Type II", "class_2", true},
		{"Classe 2 à classe 3", "class_2", true},
		{"Class 1/2", "class_1", true},
		{"Recall class 2", "class_2", true},
		{"Type 1 (high risk)", "class_1", true},
		{"Class: 3", "class_3", true},
		{"", "", true},
		{"--", "", true},
		{"—", "", true},
		{"N/A", "", true},
		{"Sans objet", "", true},
		{"Class IV", "", false},
		{"Class", "", false},
		{"High", "", false},
		{"(", "", true},
	} {
		got, ok := hazardClass(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("hazardClass(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

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
		in               string
		kinds, allergens []string
		unknown          []string
	}{
		{"Food - Allergen - Peanut", []string{kindAllergen}, []string{"peanut"}, nil},
		{"Food - Allergen - Milk", []string{kindAllergen}, []string{"milk"}, nil},
		{"Allergène - Arachides", []string{kindAllergen}, []string{"peanut"}, nil},
		{"Aliments - Allergène - Œufs", []string{kindAllergen}, []string{"egg"}, nil},
		{"Food - Allergen - Egg, Food - Allergen - Milk", []string{kindAllergen}, []string{"egg", "milk"}, nil},
		{"Food - Allergen - Egg, Milk; Tree Nuts", []string{kindAllergen}, []string{"egg", "milk", "tree_nut"}, nil},
		{"Food - Allergen - Milk - Soy", []string{kindAllergen}, []string{"milk", "soy"}, nil},
		{"Food - Allergen - Crustaceans and molluscs", []string{kindAllergen}, []string{"crustacean", "shellfish"}, nil},
		{"Allergène - Blé et triticale", []string{kindAllergen}, []string{"wheat"}, nil},
		{"Food - Allergen - Sesame Seeds / Mustard", []string{kindAllergen}, []string{"sesame", "mustard"}, nil},
		{"Food - Allergen - Sulfites", []string{kindAllergen}, []string{"sulphites"}, nil},
		{"Food - Allergen - Lupin", []string{kindAllergen}, nil, []string{"Lupin"}},
		{"Food - Allergen - Other", []string{kindAllergen}, nil, nil},
		{"Food - Microbial Contamination - Listeria", []string{kindMicrobial}, nil, nil},
		{"Contamination microbienne - E. coli O157:H7", []string{kindMicrobial}, nil, nil},
		{"Food - Extraneous Material - Glass", []string{kindForeign}, nil, nil},
		{"Food - Allergen - Fish, Food - Extraneous Material - Fish bones", []string{kindAllergen, kindForeign}, []string{"fish"}, nil},
		{"Food - Microbial Contamination - Salmonella, Food - Allergen - Egg", []string{kindMicrobial, kindAllergen}, []string{"egg"}, nil},
		{"The recalled products contain peanut, an allergen not declared on the label.", nil, nil, nil},
		{"Food", nil, nil, nil},
		{"Brakes", nil, nil, nil},
		{"", nil, nil, nil},
	} {
		got := parseIssue(tc.in)
		if !slices.Equal(got.kinds, tc.kinds) || !slices.Equal(got.allergens, tc.allergens) || !slices.Equal(got.unknown, tc.unknown) {
			t.Errorf("parseIssue(%q) = %+v; want kinds %q, allergens %q, unknown %q", tc.in, got, tc.kinds, tc.allergens, tc.unknown)
		}
		for _, a := range got.allergens {
			if !rappel.Allergens.Has(a) {
				t.Errorf("parseIssue(%q) gives %q, outside the vocabulary", tc.in, a)
			}
		}
	}
}

func TestOrganization(t *testing.T) {
	for _, tc := range []struct {
		org, category string
		want          kind
		ok            bool
	}{
		{"CFIA", "Dairy", kind{rappel.AgencyCFIA, rappel.TypeFood}, true},
		{"ACIA", "Produits laitiers", kind{rappel.AgencyCFIA, rappel.TypeFood}, true},
		{"TC", "Vehicles", kind{rappel.AgencyTransportCanada, rappel.TypeVehicle}, true},
		{"Marketed health products", "", kind{rappel.AgencyHealthCanada, rappel.TypeHealthProduct}, true},
		{"Communications and Public Affairs Branch", "Drugs - Medical devices", kind{rappel.AgencyHealthCanada, rappel.TypeMedicalDevice}, true},
		{"Communications and Public Affairs Branch", "Consumer products", kind{rappel.AgencyHealthCanada, rappel.TypeConsumerProduct}, true},
		{"Communications and Public Affairs Branch", "", kind{rappel.AgencyHealthCanada, rappel.TypeHealthProduct}, true},
		{"Cannabis Legalization and Regulation Branch", "Cannabis", kind{rappel.AgencyHealthCanada, rappel.TypeCannabis}, true},
		{"Ministry of Magic", "Medical devices", kind{}, false},
	} {
		got, ok := organization(tc.org, splitDash(tc.category))
		if got != tc.want || ok != tc.ok {
			t.Errorf("organization(%q, %q) = %+v, %v; want %+v, %v", tc.org, tc.category, got, ok, tc.want, tc.ok)
		}
	}
}

func TestTransportTitleAndIssue(t *testing.T) {
	for title, generic := range map[string]bool{
		"Transport Canada Recall - 2026432 - FORD":                                                     true,
		"Transport Canada Recall - 2026432 - MERCEDES-BENZ":                                            true,
		"Transport Canada Recall - 2026432":                                                            true,
		"Rappel de Transports Canada - 2026432 - FORD":                                                 true,
		"2018-2019 Ford F-150 and F-250: brake fluid leak":                                             false,
		"Transport Canada Recall - 2026432 - FORD: airbags may not deploy in a crash. See the notice.": false,
	} {
		if got := genericTitle.MatchString(title); got != generic {
			t.Errorf("genericTitle(%q) = %v, want %v", title, got, generic)
		}
	}
	for issue, system := range map[string]bool{
		"Brakes": true, "Latches/Locks/Linkages": true, "Système d'alimentation en carburant": true,
		"Brake fluid may leak from the master cylinder, reducing braking.": false, "": false,
	} {
		if got := isSystem(issue); got != system {
			t.Errorf("isSystem(%q) = %v, want %v", issue, got, system)
		}
	}
}
