package synth

import "math/rand/v2"

// cannabisClasses are the classes of cannabis of the Cannabis Regulations.
var cannabisClasses = map[string][2]string{
	"dried":   {"Dried cannabis", "Cannabis séché"},
	"oil":     {"Cannabis oil", "Huile de cannabis"},
	"edible":  {"Edible cannabis", "Cannabis comestible"},
	"extract": {"Cannabis extracts", "Extraits de cannabis"},
	"topical": {"Cannabis topicals", "Cannabis pour usage topique"},
}

var cannabisItems = []item{
	{noun{"Dried Cannabis", "Cannabis séché", masc, false}, "dried", h("thc", "mould", "pesticide", "microbial"), sizes("3.5 g", "7 g", "28 g")},
	{noun{"Pre-Rolled Cannabis", "Cannabis préroulé", masc, false}, "dried", h("thc", "mould", "pesticide"), sizes("3 x 0.5 g", "10 pre-rolls")},
	{noun{"Cannabis Oil", "Huile de cannabis", fem, false}, "oil", h("thc", "labelling", "childpack"), sizes("30 mL")},
	{noun{"Cannabis Gummies", "Jujubes au cannabis", masc, true}, "edible", h("thc", "childpack", "labelling"), sizes("5 gummies", "10 gummies")},
	{noun{"Cannabis Chocolate", "Chocolat au cannabis", masc, false}, "edible", h("thc", "labelling"), sizes("10 g", "4 x 2.5 g")},
	{noun{"Vape Cartridges", "Cartouches de vapotage", fem, true}, "extract", h("thc", "labelling", "pesticide"), sizes("0.5 g", "1 g")},
	{noun{"Cannabis Beverages", "Boissons au cannabis", fem, true}, "edible", h("thc", "microbial"), sizes("355 mL", "4 x 355 mL")},
	{noun{"Cannabis Capsules", "Capsules de cannabis", fem, true}, "extract", h("thc", "labelling"), sizes("30 capsules")},
	{noun{"Cannabis Topical Cream", "Crème topique au cannabis", fem, false}, "topical", h("microbial", "labelling"), sizes("50 mL", "100 mL")},
	{noun{"Hash", "Haschich", masc, false}, "extract", h("thc", "mould"), sizes("1 g", "2 g")},
}

var cannabisHazards = map[string]hazard{
	"thc": {"thc", "inaccurate THC content on the label", "d'un étiquetage inexact de la teneur en THC",
		"Testing showed the THC content of the recalled lots differs from the content stated on the label.",
		"Des analyses ont montré que la teneur en THC des lots rappelés diffère de celle indiquée sur l'étiquette.",
		"Consuming more THC than expected may cause impairment, anxiety, nausea, vomiting, rapid heart rate and, in some cases, psychotic episodes.",
		"La consommation d'une quantité de THC supérieure à ce qui est prévu peut causer des facultés affaiblies, de l'anxiété, des nausées, des vomissements, une accélération du rythme cardiaque et, dans certains cas, des épisodes psychotiques.", nil},
	"mould": {"mould", "mould", "de moisissures",
		"Mould was found in samples of the recalled lots.",
		"Des moisissures ont été trouvées dans des échantillons des lots rappelés.",
		"Smoking, vaping or consuming mouldy cannabis may cause allergic or respiratory reactions and, in people with weakened immune systems, infections.",
		"Fumer, vapoter ou consommer du cannabis moisi peut causer des réactions allergiques ou respiratoires et, chez les personnes dont le système immunitaire est affaibli, des infections.", nil},
	"pesticide": {"pesticide", "unauthorized pest control product", "de la présence d'un produit antiparasitaire non autorisé",
		"Testing found residues of a pest control product not authorized for use on cannabis.",
		"Des analyses ont révélé des résidus d'un produit antiparasitaire dont l'utilisation n'est pas autorisée sur le cannabis.",
		"The health effects of inhaling or consuming residues of unauthorized pest control products are not known.",
		"Les effets sur la santé de l'inhalation ou de la consommation de résidus de produits antiparasitaires non autorisés ne sont pas connus.", nil},
	"microbial": {"microbial", "microbial contamination", "d'une contamination microbienne",
		"Testing found microbial contamination above the acceptable limit in the recalled lots.",
		"Des analyses ont révélé une contamination microbienne supérieure à la limite acceptable dans les lots rappelés.",
		"Consuming cannabis contaminated with microorganisms may cause infections, particularly in people with weakened immune systems.",
		"La consommation de cannabis contaminé par des microorganismes peut causer des infections, en particulier chez les personnes dont le système immunitaire est affaibli.", nil},
	"childpack": healthHazards["childpack"],
	"labelling": {"labelling", "labelling that does not meet requirements", "d'un étiquetage non conforme",
		"The label of the recalled lots does not meet the labelling requirements of the Cannabis Regulations.",
		"L'étiquette des lots rappelés ne respecte pas les exigences d'étiquetage du Règlement sur le cannabis.",
		"Missing or incorrect information on the label may lead consumers to take more cannabis than intended.",
		"Des renseignements manquants ou erronés sur l'étiquette pourraient amener les consommateurs à prendre plus de cannabis que prévu.", nil},
}

// cannabisSubject draws what a cannabis notice is about.
func cannabisSubject(r *rand.Rand) subject {
	it, hz := drawItem(r, cannabisItems, cannabisHazards)
	// The dump's Category of a cannabis row is "Cannabis": the normalizer
	// relies on it when a row names no known organization. The detail
	// document names the class of cannabis.
	c := cannabisClasses[it.cat]
	return subject{brand: cannabisBrand(r), item: it.noun, hazard: hz, catEN: "Cannabis", catFR: "Cannabis",
		classEN: c[0], classFR: c[1], sizes: it.sizes}
}
