package synth

import (
	"github.com/rappel-ca/rappel/internal/hcvocab"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rappel-ca/rappel/internal/jsonstr"
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

// The dump's keys in English and French, the domain's (testdata/FORMATS.md),
// in the order of the columns above.
var dumpKeysEN, dumpKeysFR = hcvocab.DumpColumnsEN, hcvocab.DumpColumnsFR

// appendJSON appends the row as one JSON object with keys.
func (row *dumpRow) appendJSON(b []byte, keys []string) []byte {
	b = append(b, '{')
	for i, f := range row {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonstr.Append(b, keys[i])
		b = append(b, ':')
		if f.null {
			b = append(b, "null"...)
		} else {
			b = jsonstr.Append(b, f.v)
		}
	}
	return append(b, '}')
}

// Shares of the dump's shapes (testdata/FORMATS.md, Health Canada dump).
const (
	// issueLabelShare is the share of CFIA rows whose Issue is labels
	// ("Egg - Milk", "Listeria"); the others keep a sentence.
	issueLabelShare = 0.9
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

// issueLabels are the allergens as the Issue labels name them, English and
// French, by key of allergenTable: the agency files crustaceans and
// molluscs under one label.
var issueLabels = map[string][2]string{
	"milk": {"Milk", "Lait"}, "peanut": {"Peanut", "Arachides"}, "gluten": {"Gluten", "Gluten"},
	"egg": {"Egg", "Œufs"}, "fish": {"Fish", "Poisson"}, "sesame": {"Sesame seeds", "Graines de sésame"},
	"soy": {"Soy", "Soja"}, "sulphites": {"Sulphites", "Sulfites"}, "tree_nut": {"Tree nut", "Noix"},
	"wheat": {"Wheat", "Blé"}, "mustard": {"Mustard", "Moutarde"},
	"crustacean": {"Crustacean and shellfish", "Crustacés et mollusques"},
	"shellfish":  {"Crustacean and shellfish", "Crustacés et mollusques"},
}

// hazardLabels are the Issue labels of food hazards, English and French
// (the French one has two spellings where the agency uses two), by key of
// foodHazards.
var hazardLabels = map[string][3]string{
	"lis": {"Listeria", "Listeria"},
	"sal": {"Salmonella", "Salmonelle"},
	"eco": {"E. coli O157:H7", "E. coli O157:H7"},
	"cbo": {"Clostridium botulinum", "Clostridium botulinum"},
	"hep": {"Hepatitis A", "Hépatite A"},
	"nor": {"Norovirus", "Norovirus"},
	"cro": {"Cronobacter", "Cronobacter"},
	"mou": {"Mould", "Moisissures"},
	"gla": {"Extraneous Material", "Matières étrangères", "Corps étrangers"},
	"met": {"Extraneous Material", "Matières étrangères", "Corps étrangers"},
	"pla": {"Extraneous Material", "Matières étrangères", "Corps étrangers"},
	"ext": {"Extraneous Material", "Matières étrangères", "Corps étrangers"},
	"his": {"Chemical", "Chimique"},
	"psp": {"Chemical", "Chimique"},
}

// foodIssue writes the Issue of a food notice in both languages as the dump
// does: short labels, several joined by " - " ("Egg - Soy - Milk",
// "Salmonella"); or, on a few rows, the hazard's sentence. It draws from r
// exactly as often as the generator always has, so that the rest of the
// corpus stays as it was.
func foodIssue(r *rand.Rand, h hazard) (en, fr string) {
	if !chance(r, issueLabelShare) {
		return h.issueEN, h.issueFR
	}
	secondSpelling := chance(r, 0.5)
	if h.key != "allergen" {
		l := hazardLabels[h.key]
		if secondSpelling && l[2] != "" {
			return l[0], l[2]
		}
		return l[0], l[1]
	}
	var namesEN, namesFR []string
	for _, name := range h.allergens {
		l := issueLabels[allergenKey(name)]
		if !slices.Contains(namesEN, l[0]) {
			namesEN, namesFR = append(namesEN, l[0]), append(namesFR, l[1])
		}
	}
	if chance(r, 0.5) {
		// The agency's order is not the title's.
		slices.Reverse(namesEN)
		slices.Reverse(namesFR)
	}
	return strings.Join(namesEN, " - "), strings.Join(namesFR, " - ")
}

// allergenKey returns the key of allergenTable of an allergen's name.
func allergenKey(name string) string {
	for key, a := range allergenTable {
		if a.name == name {
			return key
		}
	}
	return ""
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
	st := g.style(e, true)
	base := row
	st.write(&row, typeVehicle, 0)
	en = row.appendJSON(nil, dumpKeysEN)
	if !e.hasFR {
		return en, nil
	}
	row = base
	row[colTitle].v = quirkTitle(r, titleFR)
	row[colURL].v = urlFR
	row[colProduct].v = kind[1] + " " + kind[2] + " par " + v.mk.name
	row[colIssue].v = sys.fr
	row[colCategory].v = v.cats[0].dumpFR
	st.write(&row, typeVehicle, 1)
	return en, row.appendJSON(nil, dumpKeysFR)
}

// Shares of the dump's older vocabulary and of its lost paragraph breaks
// (testdata/FORMATS.md, Health Canada dump).
const (
	// era2023Share is the share of rows written in the vocabulary of 2023
	// to early 2024: full organization names, Archived "No"/"Yes", full
	// category paths joined by ", ". Health Canada rows are written so only
	// when they have a Category, since it then says which kind of notice
	// they are, and only under their kind's own organization.
	era2023Share = 0.12
	// quotedTitleShare and quotedAdviceShare are the shares of those rows
	// whose title is wrapped in literal quotes, and whose advice starts
	// with one; emptyProductShare those of their non-TC rows whose Product
	// is empty.
	quotedTitleShare  = 0.5
	quotedAdviceShare = 0.2
	emptyProductShare = 2.0 / 3
	// gluedShare is the share of rows with advice whose paragraphs were
	// stripped without a separator ("…products.Check…", "…productsDo…").
	gluedShare = 0.3
)

// styleSeed offsets the seed of the stream dump styles are drawn from, so
// that drawing them leaves every other value of the corpus as it was.
const styleSeed = 0x2023

// dumpStyle is how a notice's dump rows are written, beyond their values.
type dumpStyle struct {
	era2023, quoteTitle, quoteAdvice, emptyProduct, glue bool
	r                                                    *rand.Rand // for the glue points
}

// style draws the dump style of e; era2023 says whether its rows may be
// written in the older vocabulary.
func (g *generator) style(e *entry, era2023 bool) dumpStyle {
	r := newRand(g.seed+styleSeed, e.key)
	st := dumpStyle{r: r}
	st.era2023 = chance(r, era2023Share) && era2023
	st.quoteTitle = chance(r, quotedTitleShare) && st.era2023
	st.quoteAdvice = chance(r, quotedAdviceShare) && st.era2023
	st.emptyProduct = chance(r, emptyProductShare) && st.era2023
	st.glue = chance(r, gluedShare)
	return st
}

// The older vocabulary: organizations, and the sectors category paths
// start with, English and French.
var (
	orgs2023 = map[string][2]string{
		"CFIA": {"Canadian Food Inspection Agency", "Agence canadienne d'inspection des aliments"},
		"TC":   {"Transport Canada", "Transports Canada"},
	}
	healthCanada2023 = [2]string{"Health Canada", "Santé Canada"}
	sectors2023      = map[int][2]string{
		typeFood: {"Food", "Aliments"}, typeHealth: {"Health products", "Produits de santé"},
		typeMedical: {"Medical devices", "Instruments médicaux"}, typeConsumer: {"Consumer products", "Produits de consommation"},
	}
	archived2023 = map[string][2]string{"0": {"No", "Non"}, "1": {"Yes", "Oui"}}
)

// write rewrites a row of a notice of type typ in the style, in English or
// French (lang 0 or 1). Its values say the same in either vocabulary.
func (st dumpStyle) write(row *dumpRow, typ, lang int) {
	if st.glue && !row[colWhat].null {
		row[colWhat].v = st.glueParagraphs(row[colWhat].v)
	}
	if !st.era2023 {
		return
	}
	if o, ok := orgs2023[row[colOrganization].v]; ok {
		row[colOrganization].v = o[lang]
	} else if row[colOrganization].v == "ACIA" {
		row[colOrganization].v = orgs2023["CFIA"][lang]
	} else {
		row[colOrganization].v = healthCanada2023[lang]
	}
	row[colArchived].v = archived2023[row[colArchived].v][lang]
	if sector, ok := sectors2023[typ]; ok && !row[colCategory].null {
		var paths []string
		for _, leaf := range strings.Split(row[colCategory].v, " - ") {
			paths = append(paths, sector[lang]+" - "+leaf)
		}
		row[colCategory].v = strings.Join(paths, ", ")
	}
	if st.quoteTitle {
		row[colTitle].v = `"` + row[colTitle].v + `"`
	}
	if st.quoteAdvice && !row[colWhat].null && row[colWhat].v != "" && !strings.Contains(row[colWhat].v, `"`) {
		row[colWhat].v = `"` + row[colWhat].v
	}
	if st.emptyProduct && typ != typeVehicle {
		row[colProduct] = field{v: ""}
	}
}

// glueParagraphs strips the breaks between the sentences of an advice as
// the dump lost its paragraphs: "products. Check" becomes "products.Check",
// or "productsCheck" where the sentence before ends in a lower-case word.
// The normalizer restores both as "products. Check".
func (st dumpStyle) glueParagraphs(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, ". ")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		next, _ := utf8.DecodeRuneInString(s[i+2:])
		if !unicode.IsUpper(next) {
			b.WriteString(s[:i+2])
			s = s[i+2:]
			continue
		}
		b.WriteString(s[:i])
		if !endsLowerWord(s[:i]) || chance(st.r, 0.5) {
			b.WriteByte('.')
		}
		s = s[i+2:]
	}
}

// endsLowerWord reports whether s ends with a word of two or more
// lower-case letters.
func endsLowerWord(s string) bool {
	n := 0
	for len(s) > 0 {
		r, size := utf8.DecodeLastRuneInString(s)
		if !unicode.IsLower(r) {
			return n >= 2 && !unicode.IsLetter(r)
		}
		s = s[:len(s)-size]
		n++
	}
	return n >= 2
}
