package edge

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/rappel-ca/rappel"
)

// This file builds the corpus the GET /recall tests search: a few hundred
// valid records shaped like the normalizers' output, bilingual with
// accents, over every recall type, agency, hazard class and several
// allergens and categories, dated over years with many ties, some with
// units_affected and some without, with UPCs in product_list.

// pair is an English text and its French translation.
type pair struct{ en, fr string }

// corpusKind is what records of one recall type are made of.
type corpusKind struct {
	typ, agency, idPrefix string
	share                 int // out of 100
	products, hazards     []corpusItem
	categories            []pair
	unitsShare            int // percent of records with units_affected
	classShare            int // percent of records with a hazard_class
}

// corpusItem is a product or a hazard, with the allergen it implies.
type corpusItem struct {
	pair
	allergen string
}

var corpusKinds = []corpusKind{
	{typ: rappel.TypeFood, agency: rappel.AgencyCFIA, idPrefix: "hc", share: 35, unitsShare: 5, classShare: 90,
		products: []corpusItem{
			{pair: pair{"Aged cheddar cheese", "Fromage cheddar vieilli"}},
			{pair: pair{"Raw milk cheese", "Fromage au lait cru"}},
			{pair: pair{"Free-range eggs", "Œufs de poules élevées en liberté"}},
			{pair: pair{"Ground beef", "Bœuf haché"}},
			{pair: pair{"Peanut butter", "Beurre d'arachide"}},
			{pair: pair{"Smoked salmon", "Saumon fumé"}},
			{pair: pair{"Sesame crackers", "Craquelins au sésame"}},
			{pair: pair{"Chocolate bars", "Tablettes de chocolat"}},
		},
		hazards: []corpusItem{
			{pair: pair{"Listeria monocytogenes", "Listeria monocytogenes"}},
			{pair: pair{"Salmonella", "Salmonella"}},
			{pair: pair{"E. coli O157:H7", "E. coli O157:H7"}},
			{pair: pair{"undeclared peanut", "arachides non déclarées"}, allergen: "peanut"},
			{pair: pair{"undeclared milk", "lait non déclaré"}, allergen: "milk"},
			{pair: pair{"undeclared egg", "œufs non déclarés"}, allergen: "egg"},
			{pair: pair{"undeclared sesame", "sésame non déclaré"}, allergen: "sesame"},
			{pair: pair{"pieces of metal", "morceaux de métal"}},
			{pair: pair{"high levels of lead", "taux élevé de plomb"}},
		},
		categories: []pair{{"Dairy", "Produits laitiers"}, {"Eggs", "Œufs"}, {"Meat and poultry", "Viandes et volailles"},
			{"Nuts and seeds", "Noix et graines"}, {"Fish and seafood", "Poissons et fruits de mer"}, {"Confectionery", "Confiseries"}}},
	{typ: rappel.TypeVehicle, agency: rappel.AgencyTransportCanada, idPrefix: "tc", share: 25, unitsShare: 85,
		products: []corpusItem{
			{pair: pair{"Ford F-150", "Ford F-150"}}, {pair: pair{"Honda Civic", "Honda Civic"}},
			{pair: pair{"Toyota RAV4", "Toyota RAV4"}}, {pair: pair{"Chevrolet Silverado", "Chevrolet Silverado"}},
		},
		hazards: []corpusItem{
			{pair: pair{"Airbags", "Coussins gonflables"}}, {pair: pair{"Brakes", "Freins"}},
			{pair: pair{"Fuel system", "Système d'alimentation"}}, {pair: pair{"Seat belts", "Ceintures de sécurité"}},
		},
		categories: []pair{{"Vehicles", "Véhicules"}}},
	{typ: rappel.TypeConsumerProduct, agency: rappel.AgencyHealthCanada, idPrefix: "hc", share: 20, unitsShare: 40, classShare: 30,
		products: []corpusItem{
			{pair: pair{"Wooden stacking toys", "Jouets à empiler en bois"}},
			{pair: pair{"Children's hoodies", "Chandails à capuchon pour enfants"}},
			{pair: pair{"Electric kettles", "Bouilloires électriques"}},
			{pair: pair{"Baby strollers", "Poussettes pour bébés"}},
		},
		hazards: []corpusItem{
			{pair: pair{"choking hazard", "risque d'étouffement"}}, {pair: pair{"strangulation hazard", "risque d'étranglement"}},
			{pair: pair{"fire hazard", "risque d'incendie"}}, {pair: pair{"fall hazard", "risque de chute"}},
		},
		categories: []pair{{"Toys and games", "Jouets et jeux"}, {"Baby and children's products", "Produits pour bébés et enfants"},
			{"Kitchen appliances", "Appareils de cuisine"}}},
	{typ: rappel.TypeHealthProduct, agency: rappel.AgencyHealthCanada, idPrefix: "hc", share: 12, unitsShare: 10, classShare: 80,
		products: []corpusItem{
			{pair: pair{"Ibuprofen tablets", "Comprimés d'ibuprofène"}},
			{pair: pair{"Hand sanitizer", "Désinfectant pour les mains"}},
			{pair: pair{"Natural health product", "Produit de santé naturel"}},
		},
		hazards: []corpusItem{
			{pair: pair{"microbial contamination", "contamination microbienne"}}, {pair: pair{"methanol", "méthanol"}},
			{pair: pair{"labelling error", "erreur d'étiquetage"}},
		},
		categories: []pair{{"Non-prescription drugs", "Médicaments sans ordonnance"}, {"Hand sanitizers", "Désinfectants pour les mains"},
			{"Natural health products", "Produits de santé naturels"}}},
	{typ: rappel.TypeMedicalDevice, agency: rappel.AgencyHealthCanada, idPrefix: "hc", share: 5, unitsShare: 30, classShare: 60,
		products:   []corpusItem{{pair: pair{"Insulin pumps", "Pompes à insuline"}}, {pair: pair{"Blood glucose meters", "Glucomètres"}}},
		hazards:    []corpusItem{{pair: pair{"software error", "erreur logicielle"}}, {pair: pair{"battery failure", "défaillance de la pile"}}},
		categories: []pair{{"Medical devices", "Instruments médicaux"}}},
	{typ: rappel.TypeCannabis, agency: rappel.AgencyHealthCanada, idPrefix: "hc", share: 3, classShare: 50,
		products:   []corpusItem{{pair: pair{"Dried cannabis", "Cannabis séché"}}, {pair: pair{"Cannabis gummies", "Jujubes au cannabis"}}},
		hazards:    []corpusItem{{pair: pair{"mould", "moisissure"}}, {pair: pair{"THC above the label", "THC supérieur à l'étiquette"}}},
		categories: []pair{{"Cannabis", "Cannabis"}}},
}

var corpusBrands = []string{"Laiterie Charlevoix", "Ferme Sainte-Hélène", "Maple Leaf Farms", "Nordic Kitchen", "Boulangerie Élise", "Prairie Gold"}

var unitsPool = []int{12, 150, 1520, 1520, 4000, 87000, 0}

// corpusRecords returns n valid records generated from seed, plus the four
// relevance records (see relevanceRecords), in no particular order.
func corpusRecords(n int, seed uint64) []*rappel.Record {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	// A small pool of dates makes ties on event_date common.
	start := time.Date(2012, 1, 1, 0, 0, 0, 0, time.UTC)
	dates := []string{"2024-02-29"}
	for len(dates) < 140 {
		dates = append(dates, start.AddDate(0, 0, rng.IntN(14*365)).Format(time.DateOnly))
	}
	recs := make([]*rappel.Record, 0, n+4)
	for i := range n {
		recs = append(recs, corpusRecord(rng, i, dates[rng.IntN(len(dates))]))
	}
	return append(recs, relevanceRecords()...)
}

func pickKind(rng *rand.Rand) *corpusKind {
	x := rng.IntN(100)
	for i := range corpusKinds {
		if x < corpusKinds[i].share {
			return &corpusKinds[i]
		}
		x -= corpusKinds[i].share
	}
	return &corpusKinds[0]
}

func corpusRecord(rng *rand.Rand, i int, date string) *rappel.Record {
	k := pickKind(rng)
	prod := k.products[rng.IntN(len(k.products))]
	haz := k.hazards[rng.IntN(len(k.hazards))]
	brand := corpusBrands[rng.IntN(len(corpusBrands))]
	num := 70000 + i
	if k.typ == rappel.TypeVehicle {
		num = 2015000 + i
	}
	id := strconv.Itoa(num)
	recallDate, _ := time.Parse(time.DateOnly, date)
	r := &rappel.Record{
		RecordID: k.idPrefix + "-" + id, RecallID: id, RecallType: k.typ, Agency: k.agency,
		Status: rappel.StatusActive, EventDate: date, RecallDate: recallDate.AddDate(0, 0, rng.IntN(30)).Format(time.DateOnly),
		FetchedAt: "2025-03-04T10:00:00Z",
		URLEn:     "https://recalls-rappels.canada.ca/en/alert-recall/" + id,
	}
	if rng.IntN(3) == 0 {
		r.Status = rappel.StatusArchived
	}
	en, fr := corpusTitles(rng, k, prod, haz, brand)
	if rng.IntN(100) < 6 {
		fr = nil // English only
	} else if rng.IntN(100) < 3 {
		en = nil // French only
	} else {
		r.URLFr = "https://recalls-rappels.canada.ca/fr/avis-rappel/" + id
	}
	r.Translations = rappel.Translations{EN: en, FR: fr}
	if rng.IntN(100) < 80 {
		cat := k.categories[rng.IntN(len(k.categories))]
		r.Category = cat.en
		if en != nil {
			en.Category = cat.en
		}
		if fr != nil {
			fr.Category = cat.fr
		}
		if k.typ == rappel.TypeFood {
			r.Categories = []string{"Food", cat.en}
		}
	}
	if rng.IntN(100) < k.unitsShare {
		u := unitsPool[rng.IntN(len(unitsPool))]
		r.UnitsAffected = &u
	}
	if rng.IntN(100) < k.classShare {
		r.HazardClass = rappel.HazardClasses[rng.IntN(3)]
	}
	if haz.allergen != "" {
		r.Allergens = []string{haz.allergen}
		if rng.IntN(4) == 0 && haz.allergen != "milk" {
			r.Allergens = append(r.Allergens, "milk")
		}
	}
	switch k.typ {
	case rappel.TypeVehicle:
		mk, model, _ := strings.Cut(prod.en, " ")
		r.VehicleMake, r.VehicleModel, r.System = strings.ToUpper(mk), strings.ToUpper(model), haz.en
		r.AffectedModels = []rappel.VehicleModel{{Make: r.VehicleMake, Model: r.VehicleModel, Year: 2015 + rng.IntN(10)}}
	default:
		r.ProductList = corpusProducts(rng, prod.en, brand)
	}
	return r
}

// corpusTitles writes a record's English and French text.
func corpusTitles(rng *rand.Rand, k *corpusKind, prod, haz corpusItem, brand string) (en, fr *rappel.Translation) {
	if k.typ == rappel.TypeVehicle {
		return &rappel.Translation{
				Title:             prod.en + ": " + haz.en + " defect may increase the risk of a crash",
				HazardDescription: "On certain vehicles, the " + strings.ToLower(haz.en) + " may not work as intended.",
				System:            haz.en,
			}, &rappel.Translation{
				Title:             prod.fr + " : défaut des " + strings.ToLower(haz.fr) + " pouvant augmenter le risque de collision",
				HazardDescription: "Sur certains véhicules, les " + strings.ToLower(haz.fr) + " pourraient ne pas fonctionner.",
				System:            haz.fr,
			}
	}
	en = &rappel.Translation{
		Title:              brand + " brand " + prod.en + " recalled due to " + haz.en,
		ProductDescription: prod.en,
		HazardDescription:  "The recalled products may contain " + haz.en + ".",
		WhatToDo:           "Do not consume, use, sell, serve or distribute the recalled products.",
	}
	switch {
	case haz.en == "Salmonella" && strings.Contains(prod.en, "eggs"):
		fr = &rappel.Translation{Title: "Salmonella dans des œufs de marque " + brand}
	case haz.en == "Listeria monocytogenes" && rng.IntN(2) == 0:
		fr = &rappel.Translation{Title: "Fromage rappelé en raison de Listeria : " + prod.fr + " de marque " + brand}
	default:
		verb := []string{"rappelé", "rappelés", "rappelées"}[rng.IntN(3)]
		fr = &rappel.Translation{Title: prod.fr + " de marque " + brand + " " + verb + " en raison de " + haz.fr}
	}
	fr.ProductDescription = prod.fr
	fr.HazardDescription = "Les produits rappelés pourraient contenir : " + haz.fr + "."
	fr.WhatToDo = "Ne consommez pas, n'utilisez pas, ne vendez pas les produits rappelés."
	return en, fr
}

// corpusProducts returns one to three products, most with a valid UPC
// printed in one of the ways sources print them.
func corpusProducts(rng *rand.Rand, name, brand string) []rappel.Product {
	var ps []rappel.Product
	for j := range 1 + rng.IntN(3) {
		p := rappel.Product{Name: fmt.Sprintf("%s %s %d", brand, name, 100*(j+1)), Size: fmt.Sprintf("%d g", 100*(j+1))}
		if rng.IntN(5) > 0 {
			body := fmt.Sprintf("%011d", rng.Int64N(1e11))
			upc := body + strconv.Itoa(rappel.CheckDigit(body))
			if rng.IntN(2) == 0 {
				upc = upc[:1] + " " + upc[1:6] + " " + upc[6:11] + " " + upc[11:]
			}
			p.UPC = upc
		}
		if rng.IntN(3) == 0 {
			p.LotCodes = []string{fmt.Sprintf("BB %d AL %02d", 2020+rng.IntN(6), 1+rng.IntN(28))}
		}
		ps = append(ps, p)
	}
	return ps
}

// relevanceRecords are four records alike but for how often their titles
// say "quetzal" (once in hc-99001, four times in hc-99004), so that BM25
// ranks them in the reverse of both record_id and event_date order.
func relevanceRecords() []*rappel.Record {
	titles := []string{
		"quetzal kettle alpha bravo charlie delta",
		"quetzal kettle quetzal bravo charlie delta",
		"quetzal kettle quetzal bravo quetzal delta",
		"quetzal kettle quetzal quetzal quetzal delta",
	}
	var recs []*rappel.Record
	for i, t := range titles {
		id := strconv.Itoa(99001 + i)
		recs = append(recs, &rappel.Record{
			RecordID: "hc-" + id, RecallID: id, RecallType: rappel.TypeConsumerProduct, Agency: rappel.AgencyHealthCanada,
			Status: rappel.StatusActive, EventDate: "2019-06-1" + strconv.Itoa(3-i), RecallDate: "2019-06-10",
			FetchedAt: "2025-03-04T10:00:00Z", Translations: rappel.Translations{EN: &rappel.Translation{Title: t}},
		})
	}
	return recs
}

// cloneRecords returns deep enough copies of recs for index.Build, which
// sorts its argument in place, to leave recs alone.
func cloneRecords(recs []*rappel.Record) []*rappel.Record {
	out := make([]*rappel.Record, len(recs))
	for i, r := range recs {
		c := *r
		out[i] = &c
	}
	return out
}
