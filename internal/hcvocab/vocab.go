package hcvocab

import (
	"slices"
	"strings"

	"github.com/rappel-ca/rappel"
)

// Health Canada's recalls open-data dump has been published in two
// vocabularies, and the agency changes them without notice (see docs/feeds.md,
// "What the agencies publish"):
//
//   - until early 2024, full names as Organization ("Canadian Food
//     Inspection Agency"), Archived "No"/"Yes", and Category as full paths
//     ("Food - Dairy") joined by ", ";
//   - since 2024, short names ("CFIA", "TC", "Medical devices"), Archived
//     "0"/"1", and Category as leaves ("Dairy") joined by " - ".
//
// Both joiners also occur inside single values ("Truck - Med. & H.D.",
// "Nuts, grains, and seeds"), so a list is cut by the known values, never
// blindly. This file is that vocabulary, both eras and both languages, in one
// place: the dump's normalizer reads rows with it, and the feeds read a row's
// Organization with it to know which record the row becomes.

// DumpColumnsEN and DumpColumnsFR are the dump's keys, English and
// French, in the order its CSV form's header lists them: the JSON's keys
// and the CSV's columns are the same names.
var (
	DumpColumnsEN = []string{"NID", "Title", "URL", "Organization", "Product", "Issue", "What you should do",
		"Category", "Recall class", "Last updated", "Archived"}
	DumpColumnsFR = []string{"NID", "Titre", "URL", "Organization", "Produit", "Problème", "Ce que vous devriez faire",
		"Catégorie", "Classe de rappel", "Dernière mise à jour", "Archivé"}
)

// DumpEra is the vocabulary a dump row is written in.
type DumpEra int

const (
	// DumpEra2024 is the vocabulary since 2024: short organizations,
	// Archived "0"/"1", leaf categories joined by " - ".
	DumpEra2024 DumpEra = iota
	// DumpEra2023 is the vocabulary until early 2024: full organization
	// names, Archived "No"/"Yes", category paths joined by ", ".
	DumpEra2023
)

// DumpOrganization is what an Organization value of the dump says.
type DumpOrganization struct {
	Agency string
	// RecallType is "" when the organization issues several kinds of
	// notice, whose Category then says which.
	RecallType string
	Era        DumpEra
}

// dumpOrganizations maps the Organization values of the dump, folded
// (rappel.FoldKey), in English and French, of both eras.
var dumpOrganizations = map[string]DumpOrganization{
	// Since 2024.
	"cfia":                                  {rappel.AgencyCFIA, rappel.TypeFood, DumpEra2024},
	"acia":                                  {rappel.AgencyCFIA, rappel.TypeFood, DumpEra2024},
	"tc":                                    {rappel.AgencyTransportCanada, rappel.TypeVehicle, DumpEra2024},
	"medical devices":                       {rappel.AgencyHealthCanada, rappel.TypeMedicalDevice, DumpEra2024},
	"instruments medicaux":                  {rappel.AgencyHealthCanada, rappel.TypeMedicalDevice, DumpEra2024},
	"consumer product safety":               {rappel.AgencyHealthCanada, rappel.TypeConsumerProduct, DumpEra2024},
	"securite des produits de consommation": {rappel.AgencyHealthCanada, rappel.TypeConsumerProduct, DumpEra2024},
	"drugs and health products":             {rappel.AgencyHealthCanada, rappel.TypeHealthProduct, DumpEra2024},
	"medicaments et produits de sante":      {rappel.AgencyHealthCanada, rappel.TypeHealthProduct, DumpEra2024},
	"marketed health products":              {rappel.AgencyHealthCanada, rappel.TypeHealthProduct, DumpEra2024},
	"produits de sante commercialises":      {rappel.AgencyHealthCanada, rappel.TypeHealthProduct, DumpEra2024},
	"controlled substances and cannabis":    {rappel.AgencyHealthCanada, rappel.TypeCannabis, DumpEra2024},
	"substances controlees et cannabis":     {rappel.AgencyHealthCanada, rappel.TypeCannabis, DumpEra2024},
	// Health Canada's communications branch issues advisories of every
	// kind of health product.
	"communications and public affairs branch":                        {rappel.AgencyHealthCanada, "", DumpEra2024},
	"direction generale des communications et des affaires publiques": {rappel.AgencyHealthCanada, "", DumpEra2024},
	// Until early 2024.
	"canadian food inspection agency":             {rappel.AgencyCFIA, rappel.TypeFood, DumpEra2023},
	"agence canadienne d'inspection des aliments": {rappel.AgencyCFIA, rappel.TypeFood, DumpEra2023},
	"transport canada":                            {rappel.AgencyTransportCanada, rappel.TypeVehicle, DumpEra2023},
	"transports canada":                           {rappel.AgencyTransportCanada, rappel.TypeVehicle, DumpEra2023},
	"health canada":                               {rappel.AgencyHealthCanada, "", DumpEra2023},
	"sante canada":                                {rappel.AgencyHealthCanada, "", DumpEra2023},
}

// DumpOrganizationNames are the English Organization values of both eras,
// for messages.
const DumpOrganizationNames = "CFIA (ACIA), TC, Medical devices, Consumer product safety, Drugs and health products, " +
	"Marketed health products, Controlled substances and cannabis, Communications and Public Affairs Branch; " +
	"until 2024 Canadian Food Inspection Agency, Transport Canada, Health Canada"

// LookupDumpOrganization returns what an Organization value of the dump
// says, in either language and either era; ok is false for a name the dump
// has never been seen to use.
func LookupDumpOrganization(name string) (DumpOrganization, bool) {
	o, ok := dumpOrganizations[rappel.FoldKey(name)]
	return o, ok
}

// dumpArchived maps the dump's Archived values, folded, to whether the
// notice is archived and the era that writes them so.
var dumpArchived = map[string]struct {
	archived bool
	era      DumpEra
}{
	"0": {false, DumpEra2024}, "1": {true, DumpEra2024},
	"no": {false, DumpEra2023}, "yes": {true, DumpEra2023},
	"non": {false, DumpEra2023}, "oui": {true, DumpEra2023},
}

// DumpArchived reads an Archived value: "0"/"1" since 2024, "No"/"Yes"
// ("Non"/"Oui") before, in any case. ok is false for anything else.
func DumpArchived(v string) (archived bool, era DumpEra, ok bool) {
	a, ok := dumpArchived[rappel.FoldKey(v)]
	return a.archived, a.era, ok
}

// dumpSectors are the first terms of the 2023 era's category paths ("Food -
// Dairy"), in English and French, with the recall type each stands for.
var dumpSectors = map[string]string{
	"food": rappel.TypeFood, "aliments": rappel.TypeFood,
	"vehicles": rappel.TypeVehicle, "vehicules": rappel.TypeVehicle,
	"health products": rappel.TypeHealthProduct, "produits de sante": rappel.TypeHealthProduct,
	"medical devices": rappel.TypeMedicalDevice, "instruments medicaux": rappel.TypeMedicalDevice,
	"consumer products": rappel.TypeConsumerProduct, "produits de consommation": rappel.TypeConsumerProduct,
	"cannabis": rappel.TypeCannabis,
}

// dumpCategoryTypes maps the category leaves of the dump that belong to one
// kind of notice, folded, to its recall type: how a notice whose
// organization issues several kinds (or one the dump has never used) is
// typed. Leaves shared by kinds ("Other") are not here.
var dumpCategoryTypes = map[string]string{
	// Health products.
	"drugs": rappel.TypeHealthProduct, "natural health products": rappel.TypeHealthProduct,
	"biologic or vaccine": rappel.TypeHealthProduct, "veterinary drugs": rappel.TypeHealthProduct,
	// Medical devices.
	"medical devices": rappel.TypeMedicalDevice, "anaesthesiology": rappel.TypeMedicalDevice, "cardiovascular": rappel.TypeMedicalDevice,
	"chemistry": rappel.TypeMedicalDevice, "dental": rappel.TypeMedicalDevice, "ear, nose and throat": rappel.TypeMedicalDevice,
	"gastroenterology and urology": rappel.TypeMedicalDevice, "general and plastic surgery": rappel.TypeMedicalDevice,
	"general hospital and personal use": rappel.TypeMedicalDevice, "haematology": rappel.TypeMedicalDevice,
	"immunology": rappel.TypeMedicalDevice, "microbiology": rappel.TypeMedicalDevice, "neurology": rappel.TypeMedicalDevice,
	"obstetrics and gynaecology": rappel.TypeMedicalDevice, "ophthalmology": rappel.TypeMedicalDevice,
	"orthopaedics": rappel.TypeMedicalDevice, "pathology": rappel.TypeMedicalDevice, "physical medicine": rappel.TypeMedicalDevice,
	"radiology": rappel.TypeMedicalDevice,
	// Consumer products.
	"appliances": rappel.TypeConsumerProduct, "beauty and personal care": rappel.TypeConsumerProduct,
	"building materials and supplies": rappel.TypeConsumerProduct, "chemicals": rappel.TypeConsumerProduct,
	"clothing": rappel.TypeConsumerProduct, "clothing and accessories": rappel.TypeConsumerProduct,
	"electronics": rappel.TypeConsumerProduct, "footwear": rappel.TypeConsumerProduct, "household items": rappel.TypeConsumerProduct,
	"jewellery": rappel.TypeConsumerProduct, "outdoor living": rappel.TypeConsumerProduct, "sports and fitness": rappel.TypeConsumerProduct,
	"tools and accessories": rappel.TypeConsumerProduct, "toys and games": rappel.TypeConsumerProduct,
	"vaping and tobacco products": rappel.TypeConsumerProduct,
	// Cannabis.
	"cannabis": rappel.TypeCannabis,
	// Food.
	"bread": rappel.TypeFood, "candy, confectionary, snacks and sweeteners": rappel.TypeFood, "canned": rappel.TypeFood,
	"condiments": rappel.TypeFood, "dairy": rappel.TypeFood, "eggs": rappel.TypeFood, "fish and seafood": rappel.TypeFood,
	"fresh": rappel.TypeFood, "frozen": rappel.TypeFood, "fruits and vegetables": rappel.TypeFood, "grain products": rappel.TypeFood,
	"herbs and spices": rappel.TypeFood, "infant products": rappel.TypeFood, "meat and poultry": rappel.TypeFood,
	"multiple food items": rappel.TypeFood, "nuts, grains, and seeds": rappel.TypeFood, "processed": rappel.TypeFood,
	// Vehicles: Transport Canada's categories.
	"a.t.v.": rappel.TypeVehicle, "bus": rappel.TypeVehicle, "car": rappel.TypeVehicle, "chassis cab": rappel.TypeVehicle,
	"child car seat": rappel.TypeVehicle, "competition vehicle": rappel.TypeVehicle, "equipment": rappel.TypeVehicle,
	"heavy trailer": rappel.TypeVehicle, "light trailer": rappel.TypeVehicle, "light truck & van": rappel.TypeVehicle,
	"minibike/ moped /scooter": rappel.TypeVehicle, "minivan": rappel.TypeVehicle, "motorcycle": rappel.TypeVehicle,
	"motorhome": rappel.TypeVehicle, "rv trailer": rappel.TypeVehicle, "restricted-use vehicle": rappel.TypeVehicle,
	"school bus": rappel.TypeVehicle, "snowmobile": rappel.TypeVehicle, "suv": rappel.TypeVehicle, "tire": rappel.TypeVehicle,
	"truck - med. & h.d.": rappel.TypeVehicle,
}

// dumpJoinedValues are the single values of the dump, folded, that hold a
// joiner (" - " or ", "): categories and Issue labels of both languages.
var dumpJoinedValues = map[string]bool{
	"truck - med. & h.d.": true, "camion - usage moyen et usage intensif": true,
	"nuts, grains, and seeds": true, "noix, grains et graines": true,
	"candy, confectionary, snacks and sweeteners": true, "bonbons, confiseries, collations et edulcorants": true,
	"ear, nose and throat": true, "oreille, nez et gorge": true,
	"e. coli - non-pathogenic": true, "e. coli - non pathogene": true,
	"e. coli - other pathogenic": true, "e. coli - autre pathogene": true,
}

// maxJoinedPieces bounds the pieces one known value spans, so that cutting
// a long list stays linear.
const maxJoinedPieces = 8

// SplitDumpList cuts a list value of the dump at joiner (" - " or ", "),
// keeping a run of pieces that spells a known value ("Truck - Med. & H.D.",
// "Nuts, grains, and seeds") as one value, the longest run first. Any dash
// with a space on each side joins like " - ". Values are trimmed; empty
// ones are dropped.
func SplitDumpList(s, joiner string) []string {
	pieces := cutAt(s, joiner)
	var out []string
	for i := 0; i < len(pieces); {
		n := 1
		for j := min(len(pieces), i+maxJoinedPieces); j > i+1; j-- {
			if isJoinedValue(strings.Join(pieces[i:j], joiner)) {
				n = j - i
				break
			}
		}
		if v := strings.TrimSpace(strings.Join(pieces[i:i+n], joiner)); v != "" {
			out = append(out, v)
		}
		i += n
	}
	return out
}

// isJoinedValue reports whether s is a known value holding a joiner, alone
// or after a 2023-era sector ("Food - Nuts, grains, and seeds").
func isJoinedValue(s string) bool {
	key := rappel.FoldKey(s)
	if dumpJoinedValues[key] {
		return true
	}
	sector, rest, ok := strings.Cut(key, " - ")
	_, isSector := dumpSectors[sector]
	return ok && isSector && dumpJoinedValues[rest]
}

// cutAt cuts s at every joiner, dashes written as "-" in the pieces'
// joins so that known values compare equal whichever dash the text used.
func cutAt(s, joiner string) []string {
	if joiner != " - " {
		return strings.Split(s, joiner)
	}
	var pieces []string
	rs := []rune(s)
	start := 0
	for i := 1; i+1 < len(rs); i++ {
		if (rs[i] == '-' || rs[i] == '–' || rs[i] == '—') && rs[i-1] == ' ' && rs[i+1] == ' ' {
			pieces = append(pieces, strings.TrimSpace(string(rs[start:max(start, i-1)])))
			start = i + 2
		}
	}
	return append(pieces, strings.TrimSpace(string(rs[min(start, len(rs)):])))
}

// DumpCategories reads a Category value written in era: its leaves, in
// order (the notice's categories), and the recall type its 2023-era paths'
// sector names, or "" when none does. "Food - Nuts, grains, and seeds,
// Food - Dairy" (2023) and "Nuts, grains, and seeds - Dairy" (2024) give the
// same leaves.
func DumpCategories(s string, era DumpEra) (leaves []string, sectorType string) {
	if era == DumpEra2024 {
		return SplitDumpList(s, " - "), ""
	}
	for _, path := range SplitDumpList(s, ", ") {
		parts := cutAt(path, " - ")
		if t, ok := dumpSectors[rappel.FoldKey(parts[0])]; ok && len(parts) > 1 {
			sectorType = cmpOr(sectorType, t)
			path = strings.Join(parts[1:], " - ")
		}
		if path = strings.TrimSpace(path); path != "" {
			leaves = append(leaves, path)
		}
	}
	return leaves, sectorType
}

// cmpOr returns a, or b when a is empty.
func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// dumpTypePriority orders the recall types categories may name: a notice
// filed under several takes the most specific (a cannabis device is a
// cannabis notice; a drug's dosing cup is a medical device).
var dumpTypePriority = []string{rappel.TypeCannabis, rappel.TypeMedicalDevice, rappel.TypeConsumerProduct, rappel.TypeHealthProduct, rappel.TypeFood, rappel.TypeVehicle}

// DumpCategoryType returns the recall type a notice's category leaves name,
// among allowed (all types when nil), by dumpTypePriority; "" when none
// does. Besides the known leaves, a leaf that names medical devices,
// consumer products or cannabis in English or French counts.
func DumpCategoryType(leaves []string, allowed []string) string {
	found := map[string]bool{}
	for _, leaf := range leaves {
		key := rappel.FoldKey(leaf)
		t, ok := dumpCategoryTypes[key]
		switch {
		case ok:
		case strings.Contains(key, "medical device") || strings.Contains(key, "instruments medicaux"):
			t = rappel.TypeMedicalDevice
		case strings.Contains(key, "consumer product") || strings.Contains(key, "produits de consommation"):
			t = rappel.TypeConsumerProduct
		}
		if t != "" {
			found[t] = true
		}
	}
	for _, t := range dumpTypePriority {
		if found[t] && (allowed == nil || slices.Contains(allowed, t)) {
			return t
		}
	}
	return ""
}

// DumpRowKind is what a dump row's Organization, Archived and Category say
// of its notice.
type DumpRowKind struct {
	Agency, RecallType string
	Era                DumpEra
	// Leaves are the notice's categories (DumpCategories).
	Leaves []string
	// Known is false for an Organization the dump has never used; TypedBy
	// then says how the rule typed the notice ("by its name", "by its
	// Category", "by default").
	Known   bool
	TypedBy string
}

// healthCanadaTypes are the recall types of Health Canada's notices.
var healthCanadaTypes = []string{rappel.TypeCannabis, rappel.TypeMedicalDevice, rappel.TypeConsumerProduct, rappel.TypeHealthProduct}

// ClassifyDumpRow reads what a dump row's notice is: the row's era (its
// Organization's, else its Archived value's, else the newer), its category
// leaves, and its agency and recall type. An organization that issues
// every kind of health notice (Health Canada, its communications branch)
// takes the kind its Category names, else health_product. One the dump has
// never used is typed by rule, so that a renamed organization costs no
// notice: the agency from its name (food, aliment or inspection: CFIA;
// transport: Transport Canada), else from what its Category names, else
// Health Canada, health_product. Both the normalizer and the feeds (which
// must know whether a row is a Transport Canada recall before it is
// normalized) read rows with it, so that they cannot disagree.
func ClassifyDumpRow(organization, archived, category string) DumpRowKind {
	org, known := LookupDumpOrganization(organization)
	k := DumpRowKind{Era: DumpEra2024, Known: known}
	if _, e, ok := DumpArchived(archived); ok {
		k.Era = e
	}
	if known {
		k.Era = org.Era
	}
	var sectorType string
	k.Leaves, sectorType = DumpCategories(category, k.Era)
	switch {
	case known && org.RecallType != "":
		k.Agency, k.RecallType = org.Agency, org.RecallType
	case known:
		k.Agency, k.RecallType = org.Agency, rappel.TypeHealthProduct
		if t := cmpOr(sectorType, DumpCategoryType(k.Leaves, healthCanadaTypes)); slices.Contains(healthCanadaTypes, t) {
			k.RecallType = t
		}
	default:
		k.Agency, k.RecallType, k.TypedBy = typeByRule(organization, cmpOr(sectorType, DumpCategoryType(k.Leaves, nil)))
	}
	return k
}

// typeByRule types the notice of an organization the dump has never used,
// from its name and the recall type its Category names (catType, or "").
func typeByRule(organization, catType string) (agency, recallType, by string) {
	name := rappel.FoldKey(organization)
	switch {
	case strings.Contains(name, "food") || strings.Contains(name, "aliment") || strings.Contains(name, "inspection"):
		return rappel.AgencyCFIA, rappel.TypeFood, "by its name"
	case strings.Contains(name, "transport"):
		return rappel.AgencyTransportCanada, rappel.TypeVehicle, "by its name"
	case catType == rappel.TypeFood:
		return rappel.AgencyCFIA, rappel.TypeFood, "by its Category"
	case catType == rappel.TypeVehicle:
		return rappel.AgencyTransportCanada, rappel.TypeVehicle, "by its Category"
	case catType != "":
		return rappel.AgencyHealthCanada, catType, "by its Category"
	}
	return rappel.AgencyHealthCanada, rappel.TypeHealthProduct, "by default"
}

// Hazard types the dump's Issue labels name. The record has no field for
// the type (the API's schema has none): it leads the hazard description the
// labels make ("Allergen: Egg, Milk").
//
// The first four are the hazards proper; the last three are the CFIA's
// issue types that are no contaminant (its old notices file them beside
// "Allergen" and "Microbiological": "Labelling", "Nutrition",
// "Tampering"), which the dump still uses as labels of their own.
const (
	HazardAllergen   = "allergen"
	HazardMicrobial  = "microbial"
	HazardExtraneous = "extraneous_material"
	HazardChemical   = "chemical"
	HazardLabelling  = "labelling"
	HazardNutrition  = "nutrition"
	HazardTampering  = "tampering"
)

// HazardNames are the hazard types in English and French. The French
// names of the last three are written here, not read: no real French row
// carrying them has been seen.
var HazardNames = map[string][2]string{
	HazardAllergen:   {"Allergen", "Allergène"},
	HazardMicrobial:  {"Microbial contamination", "Contamination microbienne"},
	HazardExtraneous: {"Extraneous material", "Matières étrangères"},
	HazardChemical:   {"Chemical", "Chimique"},
	HazardLabelling:  {"Labelling and packaging", "Étiquetage et emballage"},
	HazardNutrition:  {"Nutrition", "Nutrition"},
	HazardTampering:  {"Tampering", "Altération malveillante"},
}

// NamesHazard reports whether an Issue label is the name of its hazard
// type itself, in either language, or that name with "Issue" after it
// ("Nutrition Issue"): a description then writes the type's name alone,
// not "Nutrition: Nutrition Issue".
func NamesHazard(label, hazard string) bool {
	names, ok := HazardNames[hazard]
	if !ok {
		return false
	}
	key := strings.TrimSuffix(rappel.FoldKey(label), " issue")
	return key == rappel.FoldKey(names[0]) || key == rappel.FoldKey(names[1])
}

// IssueLabel is what one label of a dump row's Issue says.
type IssueLabel struct {
	// Hazard is one of the hazard types, or "" for a label that names
	// none ("Other").
	Hazard string
	// Allergens are the allergen vocabulary's values the label names.
	Allergens []string
}

// allergen, microbial, … build the table below.
func allergen(a ...string) IssueLabel { return IssueLabel{HazardAllergen, a} }

var (
	microbial  = IssueLabel{Hazard: HazardMicrobial}
	extraneous = IssueLabel{Hazard: HazardExtraneous}
	chemical   = IssueLabel{Hazard: HazardChemical}
	labelling  = IssueLabel{Hazard: HazardLabelling}
	nutrition  = IssueLabel{Hazard: HazardNutrition}
	tampering  = IssueLabel{Hazard: HazardTampering}
	noHazard   = IssueLabel{}
)

// dumpIssueLabels maps the labels food notices' Issue is made of, folded,
// in English and French, to what they say. Each notice's Issue is one or
// more of them joined by " - " ("Egg - Soy - Milk"); Issues of other kinds
// of notice are their own labels ("Fire hazard", "Performance").
var dumpIssueLabels = map[string]IssueLabel{
	// Allergens, English.
	"egg": allergen("egg"), "milk": allergen("milk"), "wheat": allergen("wheat"), "soy": allergen("soy"),
	"fish": allergen("fish"), "mustard": allergen("mustard"), "gluten": allergen("gluten"),
	"sesame seeds": allergen("sesame"), "sesame": allergen("sesame"), "peanut": allergen("peanut"),
	"peanuts": allergen("peanut"), "tree nut": allergen("tree_nut"), "tree nuts": allergen("tree_nut"),
	"sulphites": allergen("sulphites"), "sulfites": allergen("sulphites"),
	"crustacean and shellfish": allergen("crustacean", "shellfish"), "crustacean": allergen("crustacean"),
	"crustaceans": allergen("crustacean"), "shellfish": allergen("shellfish"),
	"allergen": allergen(), "undeclared allergen": allergen(),
	// Allergens, French.
	"oeufs": allergen("egg"), "oeuf": allergen("egg"), "lait": allergen("milk"), "ble": allergen("wheat"),
	"soja": allergen("soy"), "poisson": allergen("fish"), "moutarde": allergen("mustard"),
	"graines de sesame": allergen("sesame"), "arachides": allergen("peanut"), "arachide": allergen("peanut"),
	"noix": allergen("tree_nut"), "fruits a coque": allergen("tree_nut"),
	"crustaces et mollusques": allergen("crustacean", "shellfish"), "crustaces": allergen("crustacean"),
	"mollusques": allergen("shellfish"), "allergene": allergen(), "allergene non declare": allergen(),
	// Microbial contamination.
	"salmonella": microbial, "salmonelle": microbial, "listeria": microbial,
	"listeria monocytogenes": microbial, "norovirus": microbial,
	"e. coli - non-pathogenic": microbial, "e. coli - non pathogene": microbial,
	"e. coli - other pathogenic": microbial, "e. coli - autre pathogene": microbial,
	"e. coli o157:h7": microbial, "e. coli": microbial, "staphylococcus aureus": microbial,
	"clostridium botulinum": microbial, "hepatitis a": microbial, "hepatite a": microbial,
	"cronobacter": microbial, "bacillus cereus": microbial, "campylobacter": microbial,
	"cyclospora": microbial, "mould": microbial, "moisissures": microbial,
	"microbial contamination": microbial, "contamination microbienne": microbial,
	// Real rows of 2023 to 2024, English (no French row seen).
	"vibrio parahaemolyticus": microbial,
	// Extraneous material.
	"extraneous material": extraneous, "matieres etrangeres": extraneous, "corps etrangers": extraneous,
	// Chemical. Marine biotoxins (shellfish poisoning) are natural toxins,
	// which the CFIA counts among chemical hazards; its notices of 2023 to
	// 2024 give them their own label.
	"chemical": chemical, "chimique": chemical, "marine biotoxin": chemical,
	// The CFIA's issue types that are no contaminant, in real rows of 2023
	// to 2026 (English; no French row seen). "Labelling and packaging" is
	// also a whole Issue of consumer products, devices and cannabis.
	"labelling and packaging": labelling, "nutrition": nutrition, "nutrition issue": nutrition,
	"tampering": tampering,
	// Labels that name no hazard type of their own.
	"other": noHazard, "autre": noHazard, "contamination": noHazard,
	"non harmful (quality or spoilage)": noHazard, "non nocif (qualite ou alteration)": noHazard,
}

// LookupIssueLabel returns what one Issue label says; ok is false for a
// label outside the vocabulary.
func LookupIssueLabel(label string) (IssueLabel, bool) {
	l, ok := dumpIssueLabels[rappel.FoldKey(label)]
	return l, ok
}

// SplitIssue cuts an Issue into its labels: joined by " - " since 2024, and
// by ", " in lists of older rows, each join told from a label that holds
// one ("E. Coli - non-pathogenic") by the vocabulary.
func SplitIssue(s string) []string {
	var labels []string
	for _, part := range SplitDumpList(s, ", ") {
		labels = append(labels, SplitDumpList(part, " - ")...)
	}
	return labels
}
