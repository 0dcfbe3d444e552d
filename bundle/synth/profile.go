package synth

import (
	"math/rand/v2"

	"github.com/rappel-ca/rappel"
)

// Recall types, in the order of rappel.RecallTypes.
const (
	typeFood = iota
	typeVehicle
	typeHealth
	typeConsumer
	typeMedical
	typeCannabis
	numTypes
)

// typeTargets is how many records of each type scale 1 makes
// (testdata/FORMATS.md, "Target mix").
var typeTargets = [numTypes]float64{9000, 14000, 9000, 5500, 3000, 500}

// detailKey is an optional key of a detail document's details panel.
type detailKey int

const (
	keyRecallingFirm detailKey = iota
	keyManufacturer
	keyImporter
	keyDistribution
	keyOrigin
	keyUnitsSold
	keyTimePeriodSold
	keyCompanies
	keyClassPage
	keyCFIAID
	keyDIN
	keyNPN
	keyMunicipality
	keyUPC
	numKeys
)

// detailKeyNames are the keys as the details panel spells them.
var detailKeyNames = [numKeys]string{
	"Recalling firm", "Manufacturer", "Importer", "Distribution", "Place of origin", "Units sold",
	"Time period sold", "Companies", "Recall class page", "CFIA ID", "DIN", "NPN", "Municipality", "UPC",
}

// profile is what differs between the Health Canada recall types.
type profile struct {
	org          string
	topEN, topFR string // the first element of a detail document's category
	code         string // the detail API's category code (its site section)
	subject      func(*rand.Rand) subject
	classRate    float64 // share of dump rows with a Recall class
	classWord    string  // "Class" or "Type"
	upcRate      float64 // share of products printed with a UPC
	alerts       []string
	alertWeights []int
	// keys is the share of detail documents carrying each optional details
	// key. The shares differ by type (units sold is a consumer-product
	// thing), and are set so that across the mix they give FORMATS.md's
	// shares of documents: Recalling firm 17%, Companies 13%, …
	keys      [numKeys]float64
	classPage string
}

var profiles = [numTypes]*profile{
	typeFood: {
		org: "CFIA", topEN: "Food", topFR: "Aliments", code: "1", subject: foodSubject,
		classRate: 0.82, classWord: "Class", upcRate: 0.85,
		alerts: []string{"Food recall warning", "Recall"}, alertWeights: []int{70, 30},
		keys: [numKeys]float64{keyImporter: 0.023, keyDistribution: 0.12, keyOrigin: 0.04,
			keyCompanies: 0.08, keyClassPage: 0.25, keyCFIAID: 0.003, keyMunicipality: 0.002, keyUPC: 0.002},
		classPage: "https://inspection.canada.ca/en/food-safety-consumers/food-recalls-and-allergy-alerts/recall-classes",
	},
	typeHealth: {
		org: "Drugs and health products", topEN: "Health products", topFR: "Produits de santé", code: "3", subject: healthSubject,
		classRate: 0.82, classWord: "Type", upcRate: 0.4,
		alerts: []string{"Recall", "Advisory", "Public advisory"}, alertWeights: []int{70, 20, 10},
		keys: [numKeys]float64{keyRecallingFirm: 0.35, keyManufacturer: 0.027, keyDistribution: 0.05,
			keyCompanies: 0.15, keyClassPage: 0.20, keyDIN: 0.005, keyNPN: 0.003},
		classPage: "https://www.canada.ca/en/health-canada/services/drugs-health-products/compliance-enforcement/recalls-classification.html",
	},
	typeConsumer: {
		org: "Consumer product safety", topEN: "Consumer products", topFR: "Produits de consommation", code: "4", subject: consumerSubject,
		classRate: 0.38, classWord: "Class", upcRate: 0.55,
		alerts: []string{"Recall", "Advisory"}, alertWeights: []int{85, 15},
		keys: [numKeys]float64{keyManufacturer: 0.12, keyImporter: 0.10, keyDistribution: 0.25, keyOrigin: 0.40,
			keyUnitsSold: 0.44, keyTimePeriodSold: 0.40, keyCompanies: 0.20, keyClassPage: 0.05, keyUPC: 0.002},
		classPage: "https://www.canada.ca/en/health-canada/services/consumer-product-safety/recalls-classification.html",
	},
	typeMedical: {
		org: "Medical devices", topEN: "Health products", topFR: "Produits de santé", code: "3", subject: deviceSubject,
		classRate: 0.88, classWord: "Type", upcRate: 0.15,
		alerts: []string{"Recall", "Advisory"}, alertWeights: []int{85, 15},
		keys: [numKeys]float64{keyRecallingFirm: 0.40, keyManufacturer: 0.15, keyDistribution: 0.065, keyOrigin: 0.02,
			keyUnitsSold: 0.05, keyTimePeriodSold: 0.05, keyCompanies: 0.10, keyClassPage: 0.25},
		classPage: "https://www.canada.ca/en/health-canada/services/drugs-health-products/medical-devices/recalls-classification.html",
	},
	typeCannabis: {
		org: "Controlled substances and cannabis", topEN: "Cannabis", topFR: "Cannabis", code: "3", subject: cannabisSubject,
		classRate: 0.55, classWord: "Type", upcRate: 0.8,
		alerts: []string{"Recall", "Advisory"}, alertWeights: []int{90, 10},
		keys: [numKeys]float64{keyRecallingFirm: 0.48, keyDistribution: 0.01, keyUnitsSold: 0.10,
			keyTimePeriodSold: 0.05, keyCompanies: 0.08, keyClassPage: 0.10},
		classPage: "https://www.canada.ca/en/health-canada/services/drugs-medication/cannabis/recalls-classification.html",
	},
}

// alertTypesFR translates the alert types for the French documents.
var alertTypesFR = map[string]string{
	"Food recall warning":         "Avertissement de rappel d'aliments",
	"Updated food recall warning": "Avertissement de rappel d'aliments mis à jour",
	"Allergy alert":               "Alerte à l'allergie",
	"Recall":                      "Rappel",
	"Advisory":                    "Avis",
	"Public advisory":             "Avis public",
}

// subject is what a Health Canada notice is about.
type subject struct {
	brand        string
	item         noun
	hazard       hazard
	catEN, catFR string // the dump's Category
	// classEN/classFR, when set, is the detail document's category after
	// the type's top category; catEN/catFR otherwise.
	classEN, classFR string
	// alsoEN/alsoFR is the second category of a notice filed under two,
	// which its detail document lists too.
	alsoEN, alsoFR string
	sizes          []size
}

// allergenByName finds an allergen by its details name.
func allergenByName(name string) allergenInfo {
	for _, a := range allergenTable {
		if a.name == name {
			return a
		}
	}
	return allergenInfo{}
}

// whatToDo writes the advice of a notice in both languages.
func whatToDo(r *rand.Rand, typ int, s subject, firm string) (en, fr string) {
	switch typ {
	case typeFood:
		en = "Do not consume, serve, use, sell or distribute the recalled products. Check to see if you have recalled products in your home. Recalled products should be thrown out or returned to the location where they were purchased."
		fr = "Ne consommez pas, ne servez pas, n'utilisez pas, ne vendez pas et ne distribuez pas les produits rappelés. Vérifiez si vous avez les produits rappelés à la maison. Les produits rappelés doivent être jetés ou retournés au magasin où ils ont été achetés."
		if len(s.hazard.allergens) > 0 {
			var aEN, aFR []string
			for _, name := range s.hazard.allergens {
				a := allergenByName(name)
				aEN, aFR = append(aEN, a.allergyEN), append(aFR, a.allergyFR)
			}
			en += " If you have an allergy to " + joinList(aEN, "or") + ", do not consume the recalled products as they could cause a serious or life-threatening reaction."
			fr += " Si vous êtes allergique " + joinList(aFR, "ou") + ", ne consommez pas les produits rappelés, car ils pourraient causer une réaction grave, voire mortelle."
		} else {
			en += " If you think you became sick from consuming a recalled product, contact your healthcare provider."
			fr += " Si vous pensez être tombé malade après avoir consommé un produit rappelé, communiquez avec votre fournisseur de soins de santé."
		}
	case typeHealth:
		if s.hazard.key == "ndma" {
			return "Continue taking your medication unless your health care professional has told you to stop. Speak with your pharmacist or health care professional about treatment options. Report any health product adverse events to Health Canada.",
				"Continuez de prendre votre médicament, sauf avis contraire de votre professionnel de la santé. Discutez des options de traitement avec votre pharmacien ou votre professionnel de la santé. Signalez à Santé Canada tout effet indésirable lié à un produit de santé."
		}
		return "Stop using the recalled product. Consult your health care professional if you have used the product and have health concerns. Return the product to your local pharmacy for proper disposal. Report any health product adverse events or complaints to Health Canada.",
			"Cessez d'utiliser le produit rappelé. Consultez votre professionnel de la santé si vous avez utilisé le produit et que votre santé vous préoccupe. Rapportez le produit à votre pharmacie pour qu'il soit éliminé de façon appropriée. Signalez à Santé Canada tout effet indésirable ou toute plainte concernant un produit de santé."
	case typeConsumer:
		switch r.IntN(3) {
		case 0:
			en = "Consumers should immediately stop using the recalled products and contact " + firm + " for a full refund."
			fr = "Les consommateurs devraient cesser immédiatement d'utiliser les produits rappelés et communiquer avec " + firm + " pour obtenir un remboursement complet."
		case 1:
			en = "Consumers should immediately stop using the recalled products and return them to the place of purchase for a full refund."
			fr = "Les consommateurs devraient cesser immédiatement d'utiliser les produits rappelés et les retourner au point de vente pour obtenir un remboursement complet."
		default:
			en = "Consumers should immediately stop using the recalled products, keep them out of the reach of children, and contact " + firm + " for a free repair kit."
			fr = "Les consommateurs devraient cesser immédiatement d'utiliser les produits rappelés, les garder hors de la portée des enfants et communiquer avec " + firm + " pour obtenir une trousse de réparation gratuite."
		}
		en += " Health Canada reminds Canadians to report any health or safety incidents related to the use of this product or any other consumer product or cosmetic."
		fr += " Santé Canada rappelle aux Canadiens de signaler tout incident lié à la santé ou à la sécurité concernant l'utilisation de ce produit ou de tout autre produit de consommation ou cosmétique."
	case typeMedical:
		return "Health care professionals and users should stop using the affected lots and follow the instructions in the manufacturer's notice. Contact " + firm + " with any questions.",
			"Les professionnels de la santé et les utilisateurs devraient cesser d'utiliser les lots touchés et suivre les directives de l'avis du fabricant. Communiquez avec " + firm + " pour toute question."
	case typeCannabis:
		return "Stop using the recalled products and return them to the place of purchase. Consult your health care professional if you have used the products and have health concerns. Report any adverse reactions to cannabis products to Health Canada.",
			"Cessez d'utiliser les produits rappelés et rapportez-les au point de vente. Consultez votre professionnel de la santé si vous avez utilisé les produits et que votre santé vous préoccupe. Signalez à Santé Canada tout effet indésirable lié aux produits du cannabis."
	}
	return en, fr
}

// recallClass returns the Recall class a dump row shows: "Class 2",
// "Type II", sometimes "Class II" or "Type 2", rarely a range such as
// "Type I - Type II". Rows without one show "", "--" or null.
func recallClass(r *rand.Rand, p *profile) field {
	if !chance(r, p.classRate) {
		switch r.IntN(3) {
		case 0:
			return field{v: ""}
		case 1:
			return field{v: "--"}
		}
		return field{null: true}
	}
	n := 1 + pickWeighted(r, []int{25, 50, 25})
	roman := []string{"", "I", "II", "III"}
	word := p.classWord
	if chance(r, 0.03) {
		if n == 3 {
			n = 2
		}
		return field{v: word + " " + roman[n] + " - " + word + " " + roman[n+1]}
	}
	if (word == "Type") != chance(r, 0.1) {
		return field{v: word + " " + roman[n]}
	}
	return field{v: word + " " + string(rune('0'+n))}
}

// recallTypeName returns the rappel recall type of typ.
func recallTypeName(typ int) string { return rappel.RecallTypes[typ] }
