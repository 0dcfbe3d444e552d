package synth

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// field is one value of a dump row: a string, or null.
type field struct {
	v    string
	null bool
}

// The dump's columns, in the order the export writes them.
const (
	colNID = iota
	colTitle
	colURL
	colOrganization
	colProduct
	colIssue
	colWhat
	colCategory
	colClass
	colLastUpdated
	colArchived
	numCols
)

// dumpRow is one object of the Health Canada dump.
type dumpRow [numCols]field

// The dump's keys in English and French (testdata/FORMATS.md).
var (
	dumpKeysEN = [numCols]string{"NID", "Title", "URL", "Organization", "Product", "Issue",
		"What you should do", "Category", "Recall class", "Last updated", "Archived"}
	dumpKeysFR = [numCols]string{"NID", "Titre", "URL", "Organization", "Produit", "Problème",
		"Ce que vous devriez faire", "Catégorie", "Classe de rappel", "Dernière mise à jour", "Archivé"}
)

// appendJSON appends the row as one JSON object with keys.
func (row *dumpRow) appendJSON(b []byte, keys *[numCols]string) []byte {
	b = append(b, '{')
	for i, f := range row {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, keys[i])
		b = append(b, ':')
		if f.null {
			b = append(b, "null"...)
		} else {
			b = appendJSONString(b, f.v)
		}
	}
	return append(b, '}')
}

// Shares of the dump's shapes (testdata/FORMATS.md, Health Canada dump).
const (
	// issuePathShare is the share of CFIA rows whose Issue is a path of
	// terms ("Food - Allergen - Milk"); the others keep a sentence.
	issuePathShare = 0.9
	// joinedShare is the share of rows with a Category that join two
	// ("Drugs - Medical devices").
	joinedShare = 0.05
	// marketedShare and cpabShare are the shares of health product rows
	// filed under "Marketed health products", and of health product and
	// medical device rows under the communications branch.
	marketedShare = 0.12
	cpabShare     = 0.03
	// relativeShare and nodeShare are the shares of recalls-site URLs
	// written as a site path ("/en/alert-recall/…") and as the page's node
	// ("/fr/node/<NID>").
	relativeShare = 0.10
	nodeShare     = 0.05
	// noMakeShare is the share of Transport Canada titles without the make.
	noMakeShare = 0.05
)

// The organizations of the dump besides each type's own.
const (
	orgMarketed = "Marketed health products"
	orgCPAB     = "Communications and Public Affairs Branch"
)

// siteURL is the recalls site, which the dump's relative URLs are paths of.
const siteURL = "https://recalls-rappels.canada.ca"

// urlForm writes a recalls-site address of a dump row as the dump does:
// mostly absolute, sometimes as a path of the site, sometimes as the
// page's node. Addresses on other sites stay absolute.
func urlForm(r *rand.Rand, abs, lang, nid string) string {
	path, ok := strings.CutPrefix(abs, siteURL)
	if !ok {
		return abs
	}
	switch u := r.Float64(); {
	case u < nodeShare:
		return "/" + lang + "/node/" + nid
	case u < nodeShare+relativeShare:
		return path
	}
	return abs
}

// frenchClass writes a Recall class as the French file does: "Classe 2"
// for "Class 2", "Type II" unchanged.
func frenchClass(f field) field {
	if rest, ok := strings.CutPrefix(f.v, "Class "); ok {
		f.v = "Classe " + strings.ReplaceAll(rest, "Class ", "classe ")
	}
	return f
}

// issueNames are the allergens as the Issue paths name them, English and
// French, by key of allergenTable.
var issueNames = map[string][2]string{
	"milk": {"Milk", "Lait"}, "peanut": {"Peanut", "Arachides"}, "gluten": {"Gluten", "Gluten"},
	"egg": {"Egg", "Œufs"}, "fish": {"Fish", "Poisson"}, "sesame": {"Sesame", "Sésame"},
	"soy": {"Soy", "Soja"}, "sulphites": {"Sulphites", "Sulfites"}, "tree_nut": {"Tree Nut", "Noix"},
	"wheat": {"Wheat", "Blé"}, "mustard": {"Mustard", "Moutarde"}, "crustacean": {"Crustacean", "Crustacés"},
	"shellfish": {"Shellfish", "Mollusques"},
}

// hazardIssues are the Issue paths of food hazards after "Food - ", English
// and French, by key of foodHazards.
var hazardIssues = map[string][2]string{
	"lis": {"Microbial Contamination - Listeria", "Contamination microbienne - Listeria"},
	"sal": {"Microbial Contamination - Salmonella", "Contamination microbienne - Salmonella"},
	"eco": {"Microbial Contamination - E. coli O157:H7", "Contamination microbienne - E. coli O157:H7"},
	"cbo": {"Microbial Contamination - Clostridium botulinum", "Contamination microbienne - Clostridium botulinum"},
	"hep": {"Microbial Contamination - Hepatitis A", "Contamination microbienne - Hépatite A"},
	"nor": {"Microbial Contamination - Norovirus", "Contamination microbienne - Norovirus"},
	"cro": {"Microbial Contamination - Cronobacter", "Contamination microbienne - Cronobacter"},
	"mou": {"Microbial Contamination - Mould", "Contamination microbienne - Moisissure"},
	"gla": {"Extraneous Material - Glass", "Corps étrangers - Verre"},
	"met": {"Extraneous Material - Metal", "Corps étrangers - Métal"},
	"pla": {"Extraneous Material - Plastic", "Corps étrangers - Plastique"},
	"ext": {"Extraneous Material", "Corps étrangers"},
	"his": {"Chemical - Histamine", "Chimique - Histamine"},
	"psp": {"Natural Toxin - Paralytic Shellfish Poisoning", "Toxine naturelle - Intoxication paralysante par les mollusques"},
}

// foodIssue writes the Issue of a food notice in both languages: a path
// from the area to the hazard ("Food - Allergen - Peanut", "Allergène -
// Arachides"; the French path often leaves out the area), several
// allergens as several paths or as a list after one; or, on a few rows,
// the hazard's sentence.
func foodIssue(r *rand.Rand, h hazard) (en, fr string) {
	if !chance(r, issuePathShare) {
		return h.issueEN, h.issueFR
	}
	areaFR := ""
	if chance(r, 0.5) {
		areaFR = "Aliments - "
	}
	if h.key != "allergen" {
		p := hazardIssues[h.key]
		return "Food - " + p[0], areaFR + p[1]
	}
	var namesEN, namesFR []string
	for _, name := range h.allergens {
		for key, a := range allergenTable {
			if a.name == name {
				namesEN, namesFR = append(namesEN, issueNames[key][0]), append(namesFR, issueNames[key][1])
			}
		}
	}
	if chance(r, 0.5) {
		// One path per allergen.
		var pe, pf []string
		for i := range namesEN {
			pe, pf = append(pe, "Food - Allergen - "+namesEN[i]), append(pf, areaFR+"Allergène - "+namesFR[i])
		}
		return strings.Join(pe, ", "), strings.Join(pf, ", ")
	}
	return "Food - Allergen - " + strings.Join(namesEN, ", "), areaFR + "Allergène - " + strings.Join(namesFR, ", ")
}

// categoryTable returns the categories of a recall type's notices, in a
// fixed order.
func categoryTable(typ int) [][2]string {
	var m map[string][2]string
	switch typ {
	case typeFood:
		m = foodCategories
	case typeHealth:
		m = healthCategories
	case typeMedical:
		m = deviceCategories
	case typeConsumer:
		m = consumerCategories
	default:
		return nil
	}
	keys := slices.Sorted(maps.Keys(m))
	out := make([][2]string, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}

// secondCategory draws the category a notice is filed under besides its
// own (en): another of its type's, or, for drugs and devices, the other
// kind ("Drugs - Medical devices"). ok is false when there is none.
func secondCategory(r *rand.Rand, typ int, en string) (cat [2]string, ok bool) {
	switch {
	case typ == typeHealth && chance(r, 0.5):
		return [2]string{"Medical devices", "Instruments médicaux"}, true
	case typ == typeMedical && chance(r, 0.5):
		return [2]string{"Drugs", "Médicaments"}, true
	}
	var others [][2]string
	for _, c := range categoryTable(typ) {
		if c[0] != en {
			others = append(others, c)
		}
	}
	if len(others) == 0 {
		return cat, false
	}
	return pick(r, others), true
}

// vehicleKinds are what the dump's Transport Canada rows call the vehicles
// of each category in their Product ("Light Truck & Van recalled by
// FORD"): English, French, and the French participle agreeing with it.
var vehicleKinds = map[byte][3]string{
	'C': {"Passenger Car", "Voiture de tourisme", "rappelée"},
	'T': {"Light Truck & Van", "Camion léger et fourgonnette", "rappelés"},
	'H': {"Heavy Truck", "Camion lourd", "rappelé"},
	'M': {"Motorcycle", "Motocyclette", "rappelée"},
	'B': {"Bus", "Autobus", "rappelé"},
	'R': {"Motor Home", "Autocaravane", "rappelée"},
	'L': {"Trailer", "Remorque", "rappelée"},
	'W': {"Tire", "Pneu", "rappelé"},
	'S': {"Child Car Seat", "Siège d'auto pour enfant", "rappelé"},
	'E': {"Vehicle Equipment", "Équipement de véhicule", "rappelé"},
	'U': {"Sport Utility Vehicle", "Véhicule utilitaire sport", "rappelé"},
	'V': {"Minivan", "Minifourgonnette", "rappelée"},
	'K': {"Chassis Cab", "Châssis-cabine", "rappelé"},
	'3': {"Motor Tricycle", "Tricycle à moteur", "rappelé"},
	'Y': {"Three-Wheeled Vehicle", "Véhicule à trois roues", "rappelé"},
	'D': {"School Bus", "Autobus scolaire", "rappelé"},
	'P': {"RV Trailer", "Caravane", "rappelée"},
	'A': {"All-Terrain Vehicle", "Véhicule tout terrain", "rappelé"},
	'X': {"Restricted-Use Vehicle", "Véhicule à usage restreint", "rappelé"},
	'N': {"Snowmobile", "Motoneige", "rappelée"},
}

// vehicleKind returns what the dump calls the vehicles of category code.
func vehicleKind(code byte) [3]string {
	if k, ok := vehicleKinds[code]; ok {
		return k
	}
	return [3]string{"Vehicle", "Véhicule", "rappelé"}
}

// tcRows writes a vehicle recall's rows in the Health Canada dump, as the
// dump writes Transport Canada notices: the title names only the recall
// number and the make ("Transport Canada Recall - 2026432 - FORD", the make
// sometimes missing), the Product the kind of vehicle and the make, the
// Issue the system type (the CSV's SYSTEM_TYPE_ETXT), and there is no "What
// you should do". Its Last updated, when it has one, is the CSV's
// LAST_UPDATE_DATE, so that both files agree.
func (g *generator) tcRows(r *rand.Rand, e *entry, v *vehicleRecall, rn string, updated day) (en, fr []byte) {
	nid := strconv.FormatInt(e.nid, 10)
	titleEN, titleFR := "Transport Canada Recall - "+rn, "Rappel de Transports Canada - "+rn
	if !chance(r, noMakeShare) {
		titleEN += " - " + v.mk.name
		titleFR += " - " + v.mk.name
	}
	kind := vehicleKind(v.cats[0].code)
	sys := systems[v.def.sys]

	var urlEN, urlFR string
	switch pickWeighted(r, []int{35, 65}) {
	case 0:
		const tcURL = "https://wwwapps.tc.gc.ca/Saf-Sec-Sur/7/VRDB-BDRV/search-recherche/detail.aspx?lang="
		urlEN, urlFR = tcURL+"eng&rn="+rn, tcURL+"fra&rn="+rn
	default:
		urlEN = urlForm(r, siteURL+"/en/alert-recall/"+slug(titleEN), "en", nid)
		urlFR = urlForm(r, siteURL+"/fr/avis-rappel/"+slug(titleFR), "fr", nid)
	}

	lastUpdated := field{null: true}
	if !chance(r, 0.1) {
		lastUpdated = field{v: g.stamp(r, updated)}
	}
	class := field{null: true}
	switch r.IntN(3) {
	case 0:
		class = field{v: ""}
	case 1:
		class = field{v: "--"}
	}
	var row dumpRow
	row[colNID] = field{v: nid}
	row[colTitle] = field{v: quirkTitle(r, titleEN)}
	row[colURL] = field{v: urlEN}
	row[colOrganization] = field{v: "TC"}
	row[colProduct] = field{v: quirkText(r, kind[0]+" recalled by "+v.mk.name), null: chance(r, nullProduct)}
	row[colIssue] = field{v: sys.en}
	row[colWhat] = field{null: true}
	row[colCategory] = field{v: v.cats[0].dumpEN, null: !chance(r, categoryShare)}
	row[colClass] = class
	row[colLastUpdated] = lastUpdated
	row[colArchived] = field{v: g.archived(r, e.day)}
	en = row.appendJSON(nil, &dumpKeysEN)
	if !e.hasFR {
		return en, nil
	}
	row[colTitle].v = quirkTitle(r, titleFR)
	row[colURL].v = urlFR
	row[colProduct].v = kind[1] + " " + kind[2] + " par " + v.mk.name
	row[colIssue].v = sys.fr
	row[colCategory].v = v.cats[0].dumpFR
	return en, row.appendJSON(nil, &dumpKeysFR)
}
