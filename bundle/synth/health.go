package synth

import "math/rand/v2"

// item is a kind of non-food product that gets recalled, with the hazards
// that plausibly strike it (keys of its type's hazard table).
type item struct {
	noun
	cat     string
	hazards []string
	sizes   []size
}

// drawItem picks an item and one of its hazards from table.
func drawItem(r *rand.Rand, items []item, table map[string]hazard) (item, hazard) {
	it := pick(r, items)
	return it, table[pick(r, it.hazards)]
}

var healthCategories = map[string][2]string{
	"rx":   {"Prescription drugs", "Médicaments sur ordonnance"},
	"otc":  {"Non-prescription drugs", "Médicaments en vente libre"},
	"nhp":  {"Natural health products", "Produits de santé naturels"},
	"sani": {"Hand sanitizers and disinfectants", "Désinfectants pour les mains et désinfectants"},
}

// h lists hazard keys; it keeps the catalogues below on one line each.
func h(keys ...string) []string { return keys }

var healthItems = []item{
	{noun{"Acetaminophen Extra Strength Tablets", "Comprimés d'acétaminophène extra-fort", masc, true}, "otc", h("mislabel", "particles", "childpack", "subpotent"), sizes("24 tablets", "100 tablets")},
	{noun{"Ibuprofen Liquid Capsules", "Capsules liquides d'ibuprofène", fem, true}, "otc", h("mislabel", "subpotent"), sizes("40 capsules", "72 capsules")},
	{noun{"Children's Cough Syrup", "Sirop contre la toux pour enfants", masc, false}, "otc", h("microbial", "mislabel", "childpack"), sizes("100 mL", "250 mL")},
	{noun{"Metformin Extended-Release Tablets", "Comprimés de metformine à libération prolongée", masc, true}, "rx", h("ndma"), sizes("100 tablets", "500 tablets")},
	{noun{"Ranitidine Tablets", "Comprimés de ranitidine", masc, true}, "rx", h("ndma"), sizes("30 tablets", "500 tablets")},
	{noun{"Valsartan Tablets", "Comprimés de valsartan", masc, true}, "rx", h("ndma"), sizes("30 tablets", "100 tablets")},
	{noun{"Losartan Tablets", "Comprimés de losartan", masc, true}, "rx", h("ndma"), sizes("30 tablets", "100 tablets")},
	{noun{"Varenicline Tablets", "Comprimés de varénicline", masc, true}, "rx", h("ndma"), sizes("56 tablets")},
	{noun{"Levothyroxine Tablets", "Comprimés de lévothyroxine", masc, true}, "rx", h("subpotent", "mislabel"), sizes("90 tablets", "1000 tablets")},
	{noun{"Amoxicillin Oral Suspension", "Suspension orale d'amoxicilline", fem, false}, "rx", h("subpotent", "mislabel"), sizes("100 mL", "150 mL")},
	{noun{"Heparin Sodium Injection", "Héparine sodique injectable", fem, false}, "rx", h("sterility", "particles"), sizes("10 x 1 mL", "5 mL")},
	{noun{"Insulin Glargine Pens", "Stylos d'insuline glargine", masc, true}, "rx", h("sterility", "particles"), sizes("5 x 3 mL")},
	{noun{"Epinephrine Auto-Injectors", "Auto-injecteurs d'épinéphrine", masc, true}, "rx", h("failure"), sizes("0.3 mg", "0.15 mg")},
	{noun{"Hand Sanitizer", "Désinfectant pour les mains", masc, false}, "sani", h("methanol", "benzene", "mislabel", "microbial"), sizes("60 mL", "500 mL", "4 L")},
	{noun{"Antiseptic Wipes", "Lingettes antiseptiques", fem, true}, "sani", h("microbial"), sizes("40 wipes", "80 wipes")},
	{noun{"Hard Surface Disinfectant", "Désinfectant pour surfaces dures", masc, false}, "sani", h("mislabel", "microbial"), sizes("950 mL", "3.78 L")},
	{noun{"Lubricating Eye Drops", "Gouttes oculaires lubrifiantes", fem, true}, "otc", h("sterility", "microbial"), sizes("10 mL", "15 mL")},
	{noun{"Saline Nasal Spray", "Vaporisateur nasal salin", masc, false}, "otc", h("microbial"), sizes("30 mL")},
	{noun{"Sunscreen Lotion", "Lotion écran solaire", fem, false}, "otc", h("benzene", "microbial"), sizes("120 mL", "240 mL")},
	{noun{"Aerosol Sunscreen", "Écran solaire en aérosol", masc, false}, "otc", h("benzene"), sizes("170 g")},
	{noun{"Antiperspirant Spray", "Antisudorifique en aérosol", masc, false}, "otc", h("benzene"), sizes("107 g")},
	{noun{"Antiseptic Mouthwash", "Rince-bouche antiseptique", masc, false}, "otc", h("microbial"), sizes("500 mL", "1 L")},
	{noun{"Fluoride Toothpaste", "Dentifrice au fluorure", masc, false}, "otc", h("microbial"), sizes("100 mL", "130 mL")},
	{noun{"Nicotine Lozenges", "Pastilles de nicotine", fem, true}, "otc", h("childpack"), sizes("20 lozenges", "81 lozenges")},
	{noun{"Antacid Tablets", "Comprimés antiacides", masc, true}, "otc", h("mislabel"), sizes("60 tablets", "150 tablets")},
	{noun{"Cetirizine Allergy Tablets", "Comprimés antiallergiques de cétirizine", masc, true}, "otc", h("mislabel", "childpack"), sizes("30 tablets", "60 tablets")},
	{noun{"Topical Pain Relief Cream", "Crème analgésique topique", fem, false}, "otc", h("microbial", "mislabel"), sizes("100 g")},
	{noun{"Sexual Enhancement Capsules", "Capsules pour la performance sexuelle", fem, true}, "nhp", h("sildenafil", "tadalafil"), sizes("10 capsules", "30 capsules")},
	{noun{"Weight Loss Capsules", "Capsules amaigrissantes", fem, true}, "nhp", h("sibutramine"), sizes("30 capsules", "60 capsules")},
	{noun{"Herbal Supplement", "Supplément à base de plantes", masc, false}, "nhp", h("lead", "microbial", "mislabel"), sizes("60 capsules", "90 capsules")},
	{noun{"Vitamin D Drops", "Gouttes de vitamine D", fem, true}, "nhp", h("mislabel", "subpotent"), sizes("15 mL", "30 mL")},
	{noun{"Children's Multivitamin Gummies", "Multivitamines en jujubes pour enfants", fem, true}, "nhp", h("childpack", "mislabel"), sizes("60 gummies", "120 gummies")},
	{noun{"Iron Supplement", "Supplément de fer", masc, false}, "nhp", h("childpack"), sizes("100 tablets")},
	{noun{"Probiotic Capsules", "Capsules probiotiques", fem, true}, "nhp", h("microbial"), sizes("30 capsules", "60 capsules")},
	{noun{"Melatonin Tablets", "Comprimés de mélatonine", masc, true}, "nhp", h("mislabel", "childpack"), sizes("60 tablets", "90 tablets")},
}

// undeclaredDrug is the hazard of a prescription drug hidden in a natural
// health product.
func undeclaredDrug(key, en, fr, frAgreed, sumEN, sumFR string) hazard {
	return hazard{key, "undeclared " + en, "de la présence de " + fr + " non " + frAgreed,
		"The product was found to contain " + en + ", a prescription drug ingredient not listed on the label.",
		"Des analyses ont révélé que le produit contient du " + fr + ", un ingrédient médicamenteux sur ordonnance qui ne figure pas sur l'étiquette.",
		sumEN, sumFR, nil}
}

var healthHazards = map[string]hazard{
	"ndma": {"ndma", "nitrosamine impurity (NDMA)", "de la présence d'une impureté nitrosamine (NDMA)",
		"The recalled lots contain an impurity, N-nitrosodimethylamine (NDMA), above the acceptable limit.",
		"Les lots rappelés contiennent une impureté, la N-nitrosodiméthylamine (NDMA), au-delà de la limite acceptable.",
		"NDMA is classified as a probable human carcinogen: long-term exposure to a level above the acceptable limit may increase the risk of cancer. There is no immediate risk in taking the medication, and patients should not stop taking it without consulting their health care professional.",
		"La NDMA est classée comme cancérogène probable pour l'humain : une exposition prolongée à une concentration supérieure à la limite acceptable pourrait accroître le risque de cancer. La prise du médicament ne présente pas de risque immédiat, et les patients ne devraient pas cesser de le prendre sans consulter leur professionnel de la santé.", nil},
	"methanol": {"methanol", "methanol", "de la présence de méthanol",
		"The product contains methanol, an ingredient not permitted in hand sanitizers.",
		"Le produit contient du méthanol, un ingrédient non autorisé dans les désinfectants pour les mains.",
		"Frequent use of hand sanitizer containing methanol may cause skin irritation, eye irritation or dermatitis. Ingesting it can cause nausea, vomiting, headache, blurred vision, blindness, seizures, coma and death.",
		"L'utilisation fréquente d'un désinfectant pour les mains contenant du méthanol peut causer une irritation de la peau ou des yeux ou une dermatite. Son ingestion peut causer des nausées, des vomissements, des maux de tête, une vision trouble, la cécité, des convulsions, le coma et la mort.", nil},
	"benzene": {"benzene", "benzene", "de la présence de benzène",
		"Testing found benzene, a known carcinogen, in the recalled lots.",
		"Des analyses ont révélé la présence de benzène, un cancérogène connu, dans les lots rappelés.",
		"Long-term exposure to benzene can cause cancer. Exposure through the skin or by inhalation may also cause dizziness, drowsiness and headaches.",
		"Une exposition prolongée au benzène peut causer le cancer. L'exposition par la peau ou par inhalation peut aussi causer des étourdissements, de la somnolence et des maux de tête.", nil},
	"microbial": {"microbial", "microbial contamination", "d'une contamination microbienne",
		"The recalled lots may be contaminated with bacteria.",
		"Les lots rappelés pourraient être contaminés par des bactéries.",
		"Using a product contaminated with bacteria may cause infections. People with weakened immune systems are at greater risk of serious infection.",
		"L'utilisation d'un produit contaminé par des bactéries peut causer des infections. Les personnes dont le système immunitaire est affaibli courent un risque accru d'infection grave.", nil},
	"sterility": {"sterility", "possible lack of sterility", "d'un possible manque de stérilité",
		"The sterility of the recalled lots cannot be assured.",
		"La stérilité des lots rappelés ne peut être garantie.",
		"Using a product that is not sterile may cause serious infections, particularly of the eye or the bloodstream.",
		"L'utilisation d'un produit non stérile peut causer des infections graves, notamment aux yeux ou dans le sang.", nil},
	"sildenafil": undeclaredDrug("sildenafil", "sildenafil", "sildénafil", "déclaré",
		"Sildenafil should be used only under the supervision of a health care professional. It can interact with the nitrates in some heart medications and cause a dangerous drop in blood pressure.",
		"Le sildénafil ne devrait être utilisé que sous la supervision d'un professionnel de la santé. Il peut interagir avec les nitrates de certains médicaments pour le cœur et causer une baisse dangereuse de la pression artérielle."),
	"tadalafil": undeclaredDrug("tadalafil", "tadalafil", "tadalafil", "déclaré",
		"Tadalafil should be used only under the supervision of a health care professional. It can interact with the nitrates in some heart medications and cause a dangerous drop in blood pressure.",
		"Le tadalafil ne devrait être utilisé que sous la supervision d'un professionnel de la santé. Il peut interagir avec les nitrates de certains médicaments pour le cœur et causer une baisse dangereuse de la pression artérielle."),
	"sibutramine": {"sibutramine", "undeclared sibutramine", "de la présence de sibutramine non déclarée",
		"The product was found to contain sibutramine, a drug ingredient not listed on the label.",
		"Des analyses ont révélé que le produit contient de la sibutramine, un ingrédient médicamenteux qui ne figure pas sur l'étiquette.",
		"Sibutramine was withdrawn from the Canadian market in 2010 because of an increased risk of heart attack and stroke.",
		"La sibutramine a été retirée du marché canadien en 2010 en raison d'un risque accru de crise cardiaque et d'accident vasculaire cérébral.", nil},
	"mislabel": {"mislabel", "labelling error", "d'une erreur d'étiquetage",
		"The label of the recalled lots gives incorrect dosing information.",
		"L'étiquette des lots rappelés donne des renseignements posologiques erronés.",
		"Incorrect dosing information could lead to taking too much or too little of the product, which could cause adverse health effects.",
		"Des renseignements posologiques erronés pourraient entraîner la prise d'une dose trop forte ou trop faible du produit, ce qui pourrait nuire à la santé.", nil},
	"childpack": {"childpack", "lack of child-resistant packaging", "d'un emballage qui n'est pas à l'épreuve des enfants",
		"The product is not sold in child-resistant packaging as required.",
		"Le produit n'est pas vendu dans un emballage à l'épreuve des enfants, comme l'exige la réglementation.",
		"Accidental ingestion by young children could cause serious poisoning.",
		"L'ingestion accidentelle par de jeunes enfants pourrait causer une intoxication grave.", nil},
	"particles": {"particles", "particulate matter", "de la présence de particules",
		"Visible particles were found in some units of the recalled lots.",
		"Des particules visibles ont été trouvées dans certaines unités des lots rappelés.",
		"Particles in a drug product may cause irritation or, when injected, blockage of small blood vessels.",
		"Des particules dans un médicament peuvent causer une irritation ou, en cas d'injection, l'obstruction de petits vaisseaux sanguins.", nil},
	"subpotent": {"subpotent", "low potency", "d'une teneur insuffisante en ingrédient actif",
		"Testing showed the recalled lots contain less of the active ingredient than the label states.",
		"Des analyses ont montré que les lots rappelés contiennent moins d'ingrédient actif que ce qu'indique l'étiquette.",
		"A product with too little active ingredient may not work as intended, and the condition being treated may not be controlled.",
		"Un produit qui contient trop peu d'ingrédient actif pourrait ne pas agir comme prévu, et l'affection traitée pourrait ne pas être maîtrisée.", nil},
	"lead": {"lead", "high levels of lead", "de concentrations élevées de plomb",
		"Testing found lead above the acceptable limit in the recalled lots.",
		"Des analyses ont révélé une concentration de plomb supérieure à la limite acceptable dans les lots rappelés.",
		"Long-term exposure to lead may harm the nervous system, kidneys and blood, and is especially dangerous for children and pregnant women.",
		"Une exposition prolongée au plomb peut nuire au système nerveux, aux reins et au sang, et est particulièrement dangereuse pour les enfants et les femmes enceintes.", nil},
	"failure": {"failure", "possible failure to activate", "d'un risque de défaillance à l'activation",
		"Some units of the recalled lots may fail to activate or may need more force than usual to activate.",
		"Certaines unités des lots rappelés pourraient ne pas s'activer ou exiger plus de force qu'à l'habitude pour s'activer.",
		"A device that fails to deliver its dose during a severe allergic reaction could lead to serious injury or death.",
		"Un dispositif qui n'administre pas sa dose lors d'une réaction allergique grave pourrait entraîner des blessures graves ou la mort.", nil},
}

// healthSubject draws what a health product notice is about.
func healthSubject(r *rand.Rand) subject {
	it, hz := drawItem(r, healthItems, healthHazards)
	c := healthCategories[it.cat]
	return subject{brand: pick(r, healthBrands), item: it.noun, hazard: hz, catEN: c[0], catFR: c[1], sizes: it.sizes}
}
