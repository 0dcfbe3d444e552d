package synth

import (
	"math/rand/v2"
	"strings"
)

// foodCategories are the product categories of food notices, English and
// French.
var foodCategories = map[string][2]string{
	"dairy":   {"Dairy", "Produits laitiers"},
	"meat":    {"Meat and poultry", "Viandes et volailles"},
	"fish":    {"Fish and seafood", "Poissons et fruits de mer"},
	"produce": {"Fruits and vegetables", "Fruits et légumes"},
	"bakery":  {"Bakery products", "Produits de boulangerie"},
	"sweets":  {"Confectionery", "Confiseries"},
	"snack":   {"Snack foods", "Grignotines"},
	"meals":   {"Prepared meals", "Plats préparés"},
	"nuts":    {"Nuts and seeds", "Noix et graines"},
	"spices":  {"Spices and seasonings", "Épices et assaisonnements"},
	"drinks":  {"Beverages", "Boissons"},
	"infant":  {"Infant foods", "Aliments pour nourrissons"},
	"grains":  {"Grains and pasta", "Céréales et pâtes"},
	"sauces":  {"Sauces and condiments", "Sauces et condiments"},
	"frozen":  {"Frozen desserts", "Desserts glacés"},
}

// foodItem is a kind of food that gets recalled, with the hazards that
// plausibly strike it and the allergens it may carry undeclared.
type foodItem struct {
	noun
	cat       string
	hazards   string // keys of foodHazards
	allergens string // keys of allergenTable
	raw       bool   // raw produce: not a foreign-material recall
	sizes     []size
}

var foodItems = []foodItem{
	{noun{"Soft Cheese", "Fromage à pâte molle", masc, false}, "dairy", "lis mou", "", false, sizes("200 g", "250 g", "1 kg")},
	{noun{"Brie Cheese", "Fromage brie", masc, false}, "dairy", "lis eco", "", false, sizes("125 g", "200 g", "1 kg")},
	{noun{"Feta Cheese", "Fromage feta", masc, false}, "dairy", "lis", "", false, sizes("200 g", "400 g")},
	{noun{"Cheese Curds", "Fromage en grains", masc, false}, "dairy", "lis eco", "", false, sizes("300 g", "454 g")},
	{noun{"Yogurt", "Yogourt", masc, false}, "dairy", "mou pla", "tree_nut peanut", false, sizes("100 g", "650 g", "750 g")},
	{noun{"Chocolate Milk", "Lait au chocolat", masc, false}, "drinks", "mou", "", false, sizes("473 mL", "1 L", "2 L")},
	{noun{"Ice Cream", "Crème glacée", fem, false}, "frozen", "lis", "peanut tree_nut egg wheat soy", false, sizes("1.5 L", "2 L", "4 x 100 mL")},
	{noun{"Ground Beef", "Bœuf haché", masc, false}, "meat", "eco", "", false, sizes("454 g", "1 kg", "variable")},
	{noun{"Pork Sausages", "Saucisses de porc", fem, true}, "meat", "lis sal", "milk mustard soy wheat", false, sizes("375 g", "500 g", "1 kg")},
	{noun{"Sliced Deli Ham", "Jambon tranché", masc, false}, "meat", "lis", "milk soy", false, sizes("175 g", "375 g")},
	{noun{"Chicken Nuggets", "Pépites de poulet", fem, true}, "meat", "sal", "wheat egg milk soy", false, sizes("700 g", "1.6 kg")},
	{noun{"Frozen Breaded Chicken", "Poulet pané surgelé", masc, false}, "meat", "sal", "wheat egg milk", false, sizes("800 g", "1.5 kg")},
	{noun{"Beef Jerky", "Bœuf séché", masc, false}, "meat", "lis mou", "soy wheat mustard", false, sizes("70 g", "230 g")},
	{noun{"Pâté", "Pâté", masc, false}, "meat", "lis cbo", "milk egg", false, sizes("125 g", "200 g")},
	{noun{"Smoked Salmon", "Saumon fumé", masc, false}, "fish", "lis cbo", "", false, sizes("100 g", "300 g")},
	{noun{"Raw Oysters", "Huîtres crues", fem, true}, "fish", "nor psp eco", "", false, sizes("12 units", "100 units")},
	{noun{"Fresh Mussels", "Moules fraîches", fem, true}, "fish", "psp nor", "", false, sizes("907 g", "2.27 kg")},
	{noun{"Frozen Shrimp", "Crevettes surgelées", fem, true}, "fish", "sal", "", false, sizes("340 g", "907 g")},
	{noun{"Canned Tuna", "Thon en conserve", masc, false}, "fish", "his cbo", "soy", false, sizes("170 g", "3 x 85 g")},
	{noun{"Fish Balls", "Boulettes de poisson", fem, true}, "fish", "lis", "wheat crustacean egg", false, sizes("200 g", "400 g")},
	{noun{"Frozen Fish Fillets", "Filets de poisson surgelés", masc, true}, "fish", "his", "wheat milk egg", false, sizes("400 g", "800 g")},
	{noun{"Enoki Mushrooms", "Champignons enoki", masc, true}, "produce", "lis", "", true, sizes("150 g", "200 g")},
	{noun{"Alfalfa Sprouts", "Germes de luzerne", masc, true}, "produce", "sal eco lis", "", true, sizes("113 g", "170 g")},
	{noun{"Bean Sprouts", "Fèves germées", fem, true}, "produce", "sal lis", "", true, sizes("340 g", "2.27 kg")},
	{noun{"Bagged Salad", "Salade en sachet", fem, false}, "produce", "eco lis sal", "", true, sizes("142 g", "312 g")},
	{noun{"Cantaloupe", "Cantaloup", masc, false}, "produce", "sal lis", "", true, sizes("1 unit", "variable")},
	{noun{"Green Onions", "Oignons verts", masc, true}, "produce", "hep sal", "", true, sizes("1 bunch")},
	{noun{"Frozen Mixed Berries", "Petits fruits mélangés surgelés", masc, true}, "produce", "hep nor", "", false, sizes("600 g", "1.5 kg")},
	{noun{"Frozen Corn", "Maïs surgelé", masc, false}, "produce", "lis", "", false, sizes("750 g", "2 kg")},
	{noun{"Dried Apricots", "Abricots séchés", masc, true}, "produce", "mou", "sulphites", false, sizes("200 g", "454 g")},
	{noun{"Pickled Vegetables", "Légumes marinés", masc, true}, "produce", "cbo gla", "sulphites mustard", false, sizes("500 mL", "1 L")},
	{noun{"Kimchi", "Kimchi", masc, false}, "meals", "mou gla", "fish crustacean shellfish", false, sizes("400 g", "1 kg")},
	{noun{"Hummus", "Houmous", masc, false}, "meals", "lis cbo", "sesame", false, sizes("227 g", "454 g")},
	{noun{"Tahini", "Tahini", masc, false}, "sauces", "sal", "peanut", false, sizes("400 g", "907 g")},
	{noun{"Sesame Snacks", "Collations au sésame", fem, true}, "snack", "sal", "peanut tree_nut", false, sizes("50 g", "200 g")},
	{noun{"Potato Chips", "Croustilles", fem, true}, "snack", "", "milk wheat soy", false, sizes("40 g", "200 g", "235 g")},
	{noun{"Crackers", "Craquelins", masc, true}, "bakery", "", "milk sesame soy egg", false, sizes("200 g", "250 g")},
	{noun{"Cookies", "Biscuits", masc, true}, "bakery", "mou", "milk egg peanut tree_nut sesame soy", false, sizes("300 g", "500 g", "12 pieces")},
	{noun{"White Bread", "Pain blanc", masc, false}, "bakery", "mou", "milk egg sesame soy", false, sizes("570 g", "675 g")},
	{noun{"Gluten-Free Bread", "Pain sans gluten", masc, false}, "bakery", "mou", "gluten wheat egg milk", false, sizes("454 g", "550 g")},
	{noun{"Muffins", "Muffins", masc, true}, "bakery", "mou", "milk egg tree_nut peanut", false, sizes("4 pieces", "6 pieces", "340 g")},
	{noun{"Croissants", "Croissants", masc, true}, "bakery", "mou", "egg sesame", false, sizes("6 pieces", "12 pieces")},
	{noun{"Dark Chocolate", "Chocolat noir", masc, false}, "sweets", "sal", "milk peanut tree_nut soy", false, sizes("100 g", "170 g")},
	{noun{"Chocolate Bars", "Tablettes de chocolat", fem, true}, "sweets", "sal", "milk peanut tree_nut", false, sizes("45 g", "100 g")},
	{noun{"Gummy Candies", "Bonbons gélifiés", masc, true}, "sweets", "", "wheat soy", false, sizes("150 g", "400 g")},
	{noun{"Granola Bars", "Barres granola", fem, true}, "snack", "sal", "peanut tree_nut milk sesame soy", false, sizes("6 x 24 g", "210 g")},
	{noun{"Protein Bars", "Barres protéinées", fem, true}, "snack", "", "milk peanut soy egg", false, sizes("4 x 60 g", "12 x 55 g")},
	{noun{"Trail Mix", "Mélange montagnard", masc, false}, "nuts", "sal", "peanut sesame", false, sizes("300 g", "800 g")},
	{noun{"Almonds", "Amandes", fem, true}, "nuts", "sal", "peanut", false, sizes("200 g", "1 kg")},
	{noun{"Pistachios", "Pistaches", fem, true}, "nuts", "sal", "peanut", false, sizes("200 g", "500 g")},
	{noun{"Peanut Butter", "Beurre d'arachide", masc, false}, "nuts", "sal", "tree_nut", false, sizes("500 g", "1 kg")},
	{noun{"Spice Mix", "Mélange d'épices", masc, false}, "spices", "sal", "mustard wheat peanut gluten", false, sizes("50 g", "100 g")},
	{noun{"Ground Black Pepper", "Poivre noir moulu", masc, false}, "spices", "sal", "", false, sizes("50 g", "400 g")},
	{noun{"Curry Powder", "Poudre de cari", fem, false}, "spices", "sal", "mustard peanut wheat", false, sizes("100 g", "400 g")},
	{noun{"Soy Sauce", "Sauce soya", fem, false}, "sauces", "gla", "wheat gluten", false, sizes("250 mL", "1 L")},
	{noun{"Salad Dressing", "Vinaigrette", fem, false}, "sauces", "mou gla", "egg mustard milk", false, sizes("250 mL", "475 mL")},
	{noun{"Pesto Sauce", "Sauce pesto", fem, false}, "sauces", "cbo", "tree_nut milk", false, sizes("190 mL", "270 g")},
	{noun{"Pasta Sauce", "Sauce pour pâtes", fem, false}, "sauces", "gla cbo", "milk wheat", false, sizes("650 mL", "700 mL")},
	{noun{"Honey", "Miel", masc, false}, "sauces", "gla", "", false, sizes("500 g", "1 kg")},
	{noun{"Maple Syrup", "Sirop d'érable", masc, false}, "sauces", "gla mou", "", false, sizes("250 mL", "540 mL")},
	{noun{"Frozen Dumplings", "Raviolis chinois surgelés", masc, true}, "meals", "lis", "crustacean sesame egg soy", false, sizes("400 g", "1.2 kg")},
	{noun{"Instant Noodles", "Nouilles instantanées", fem, true}, "grains", "", "egg fish crustacean soy", false, sizes("85 g", "5 x 85 g")},
	{noun{"Fresh Pasta", "Pâtes fraîches", fem, true}, "grains", "lis mou", "egg milk", false, sizes("350 g", "700 g")},
	{noun{"Wheat Flour", "Farine de blé", fem, false}, "grains", "eco", "", false, sizes("2.5 kg", "10 kg")},
	{noun{"Rice Crackers", "Craquelins de riz", masc, true}, "snack", "", "wheat soy sesame gluten", false, sizes("100 g", "150 g")},
	{noun{"Infant Formula", "Préparation pour nourrissons", fem, false}, "infant", "cro sal", "", false, sizes("400 g", "900 g")},
	{noun{"Baby Food Purée", "Purée pour bébés", fem, false}, "infant", "cbo gla", "milk", false, sizes("128 mL", "4 x 113 g")},
	{noun{"Apple Juice", "Jus de pomme", masc, false}, "drinks", "mou gla", "sulphites", false, sizes("1.89 L", "6 x 200 mL")},
	{noun{"Kombucha", "Kombucha", masc, false}, "drinks", "mou gla", "", false, sizes("355 mL", "1 L")},
	{noun{"Coconut Water", "Eau de coco", fem, false}, "drinks", "mou", "", false, sizes("330 mL", "1 L")},
	{noun{"Prepared Sandwiches", "Sandwichs préparés", masc, true}, "meals", "lis", "milk egg mustard sesame", false, sizes("180 g", "220 g")},
	{noun{"Frozen Pizza", "Pizza surgelée", fem, false}, "meals", "lis", "soy egg fish", false, sizes("400 g", "850 g")},
	{noun{"Sushi", "Sushis", masc, true}, "meals", "lis sal nor", "sesame crustacean egg", false, sizes("8 pieces", "12 pieces")},
	{noun{"Tofu", "Tofu", masc, false}, "meals", "lis", "", false, sizes("350 g", "454 g")},
	{noun{"Canned Soup", "Soupe en conserve", fem, false}, "meals", "cbo", "milk wheat soy", false, sizes("540 mL", "900 mL")},
}

// hazard is why something is recalled: the words of its title, its issue
// (the dump's short text) and its summary (the detail document's longer one).
type hazard struct {
	key              string
	titleEN, titleFR string // "recalled due to <titleEN>", "rappelé en raison <titleFR>"
	issueEN, issueFR string
	sumEN, sumFR     string
	allergens        []string // English allergen names, for undeclared-allergen recalls
}

// mayNotLook is how the summaries of microbial food hazards begin.
const (
	mayNotLookEN = " may not look or smell spoiled but can still make you sick. "
	mayNotLookFR = " peuvent ne pas sembler gâtés ni dégager d'odeur suspecte, mais peuvent quand même rendre une personne malade. "
)

var foodHazards = map[string]hazard{
	"lis": {"lis", "Listeria monocytogenes", "de Listeria monocytogenes",
		"The recalled products may be contaminated with Listeria monocytogenes.",
		"Les produits rappelés pourraient être contaminés par Listeria monocytogenes.",
		"Food contaminated with Listeria monocytogenes" + mayNotLookEN + "Symptoms can include vomiting, nausea, persistent fever, muscle aches, severe headache and neck stiffness. Pregnant women, the elderly and people with weak immune systems are particularly at risk.",
		"Les aliments contaminés par Listeria monocytogenes" + mayNotLookFR + "Les symptômes peuvent comprendre des vomissements, des nausées, une fièvre persistante, des douleurs musculaires, des maux de tête violents et une raideur de la nuque. Les femmes enceintes, les personnes âgées et les personnes dont le système immunitaire est affaibli sont particulièrement à risque.", nil},
	"sal": {"sal", "Salmonella", "de Salmonella",
		"The recalled products may be contaminated with Salmonella.",
		"Les produits rappelés pourraient être contaminés par la bactérie Salmonella.",
		"Food contaminated with Salmonella" + mayNotLookEN + "Young children, pregnant women, the elderly and people with weakened immune systems may contract serious and sometimes deadly infections. Healthy people may experience short-term symptoms such as fever, headache, vomiting, nausea, abdominal cramps and diarrhea.",
		"Les aliments contaminés par la bactérie Salmonella" + mayNotLookFR + "Les jeunes enfants, les femmes enceintes, les personnes âgées et les personnes dont le système immunitaire est affaibli peuvent contracter des infections graves et parfois mortelles. Les personnes en santé peuvent présenter des symptômes de courte durée, comme de la fièvre, des maux de tête, des vomissements, des nausées, des crampes abdominales et de la diarrhée.", nil},
	"eco": {"eco", "E. coli O157:H7", "d'E. coli O157:H7",
		"The recalled products may be contaminated with E. coli O157:H7.",
		"Les produits rappelés pourraient être contaminés par E. coli O157:H7.",
		"Food contaminated with E. coli O157:H7" + mayNotLookEN + "Symptoms can include nausea, vomiting, mild to severe abdominal cramps and watery to bloody diarrhea. In severe cases of illness, some people may have seizures or strokes, need blood transfusions and kidney dialysis, or live with permanent kidney damage.",
		"Les aliments contaminés par E. coli O157:H7" + mayNotLookFR + "Les symptômes peuvent comprendre des nausées, des vomissements, des crampes abdominales légères à sévères et une diarrhée aqueuse ou sanglante. Dans les cas graves, certaines personnes peuvent subir des convulsions ou des accidents vasculaires cérébraux, avoir besoin de transfusions sanguines et de dialyse rénale, ou garder des lésions rénales permanentes.", nil},
	"cbo": {"cbo", "Clostridium botulinum", "de Clostridium botulinum",
		"The recalled products may permit the growth of Clostridium botulinum.",
		"Les produits rappelés pourraient permettre la croissance de Clostridium botulinum.",
		"Food contaminated with Clostridium botulinum toxin" + mayNotLookEN + "Symptoms in adults can include facial paralysis or loss of facial expression, difficulty swallowing or speaking, blurred or double vision, and difficulty breathing.",
		"Les aliments contaminés par la toxine de Clostridium botulinum" + mayNotLookFR + "Chez l'adulte, les symptômes peuvent comprendre une paralysie faciale ou une perte d'expression du visage, de la difficulté à avaler ou à parler, une vision trouble ou double et des difficultés respiratoires.", nil},
	"hep": {"hep", "hepatitis A virus", "du virus de l'hépatite A",
		"The recalled products may be contaminated with hepatitis A virus.",
		"Les produits rappelés pourraient être contaminés par le virus de l'hépatite A.",
		"Food contaminated with hepatitis A virus" + mayNotLookEN + "Symptoms can include fever, loss of appetite, nausea, vomiting, abdominal pain, dark urine and yellowing of the skin and eyes.",
		"Les aliments contaminés par le virus de l'hépatite A" + mayNotLookFR + "Les symptômes peuvent comprendre de la fièvre, une perte d'appétit, des nausées, des vomissements, des douleurs abdominales, une urine foncée et un jaunissement de la peau et des yeux.", nil},
	"nor": {"nor", "norovirus", "de norovirus",
		"The recalled products may be contaminated with norovirus.",
		"Les produits rappelés pourraient être contaminés par le norovirus.",
		"Food contaminated with norovirus" + mayNotLookEN + "Symptoms can include nausea, vomiting, diarrhea and abdominal cramps.",
		"Les aliments contaminés par le norovirus" + mayNotLookFR + "Les symptômes peuvent comprendre des nausées, des vomissements, de la diarrhée et des crampes abdominales.", nil},
	"cro": {"cro", "Cronobacter", "de Cronobacter",
		"The recalled products may be contaminated with Cronobacter.",
		"Les produits rappelés pourraient être contaminés par Cronobacter.",
		"Cronobacter can cause severe illness in infants, particularly those under two months of age, born prematurely or with weakened immune systems.",
		"Cronobacter peut causer une maladie grave chez les nourrissons, en particulier ceux de moins de deux mois, nés prématurément ou dont le système immunitaire est affaibli.", nil},
	"mou": {"mou", "mould", "de moisissures",
		"Mould was found in the recalled products.",
		"Des moisissures ont été trouvées dans les produits rappelés.",
		"The recalled products may contain mould. Consuming mouldy food may cause allergic or respiratory reactions in some people.",
		"Les produits rappelés pourraient contenir des moisissures. La consommation d'aliments moisis peut causer des réactions allergiques ou respiratoires chez certaines personnes.", nil},
	"gla": foreignMatter("gla", "glass", "verre"),
	"met": foreignMatter("met", "metal", "métal"),
	"pla": foreignMatter("pla", "plastic", "plastique"),
	"ext": {"ext", "extraneous material", "de la présence de corps étrangers",
		"The recalled products may contain extraneous material.",
		"Les produits rappelés pourraient contenir des corps étrangers.",
		"Consuming food that contains extraneous material may cause injury to the mouth, throat or digestive tract.",
		"La consommation d'aliments contenant des corps étrangers pourrait causer des blessures à la bouche, à la gorge ou au tube digestif.", nil},
	"his": {"his", "histamine", "de la présence d'histamine",
		"The recalled products may contain high levels of histamine.",
		"Les produits rappelés pourraient contenir des concentrations élevées d'histamine.",
		"Fish with high levels of histamine can cause scombroid poisoning. Symptoms can include a tingling or burning sensation in the mouth, rash, headache, dizziness and nausea.",
		"Le poisson contenant des concentrations élevées d'histamine peut causer une intoxication scombroïde. Les symptômes peuvent comprendre une sensation de picotement ou de brûlure dans la bouche, une éruption cutanée, des maux de tête, des étourdissements et des nausées.", nil},
	"psp": {"psp", "paralytic shellfish poisoning toxins", "de toxines responsables de l'intoxication paralysante par les mollusques",
		"The recalled products may contain toxins that cause paralytic shellfish poisoning.",
		"Les produits rappelés pourraient contenir des toxines responsables de l'intoxication paralysante par les mollusques.",
		"Shellfish contaminated with paralytic shellfish poisoning toxins may not look or smell spoiled. Symptoms include tingling and numbness of the lips, tongue, hands and feet, and difficulty swallowing; in severe cases, paralysis and death may occur.",
		"Les mollusques contaminés par ces toxines peuvent ne pas sembler gâtés ni dégager d'odeur suspecte. Les symptômes comprennent des picotements et un engourdissement des lèvres, de la langue, des mains et des pieds, et de la difficulté à avaler; dans les cas graves, une paralysie et la mort peuvent survenir.", nil},
}

// foreignMatter is the hazard of pieces of glass, metal or plastic.
func foreignMatter(key, en, fr string) hazard {
	return hazard{key, "pieces of " + en, "de la présence de morceaux de " + fr,
		"The recalled products may contain pieces of " + en + ".",
		"Les produits rappelés pourraient contenir des morceaux de " + fr + ".",
		"Consuming food that contains pieces of " + en + " may cause injury to the mouth, throat or digestive tract.",
		"La consommation d'aliments contenant des morceaux de " + fr + " pourrait causer des blessures à la bouche, à la gorge ou au tube digestif.", nil}
}

// foodHazardWeights sets how often each non-allergen hazard strikes.
var foodHazardWeights = map[string]int{
	"lis": 20, "sal": 14, "eco": 7, "cbo": 5, "hep": 2, "nor": 3, "cro": 1, "mou": 7,
	"gla": 5, "met": 7, "pla": 7, "ext": 4, "his": 1, "psp": 1,
}

// foodHazardOrder fixes the order of foodHazardWeights for drawing.
var foodHazardOrder = []string{"lis", "sal", "eco", "cbo", "hep", "nor", "cro", "mou", "gla", "met", "pla", "ext", "his", "psp"}

// allergenShare is the share of food notices about an undeclared allergen;
// FORMATS.md wants the Allergens key on ~22% of food documents.
const allergenShare = 0.225

// allergenInfo is one allergen in the words notices use.
type allergenInfo struct {
	name      string // the details' Allergens name
	en        string // "undeclared <en>"
	allergyEN string // "people with an allergy to <allergyEN>"
	npFR      string // "contiennent <npFR>"
	undeclFR  string // "en raison <undeclFR>"
	allergyFR string // "les personnes allergiques <allergyFR>"
	plural    bool   // npFR is plural
}

var allergenTable = map[string]allergenInfo{
	"milk":       {"Milk", "milk", "milk", "du lait", "de lait non déclaré", "au lait", false},
	"peanut":     {"Peanuts", "peanut", "peanuts", "des arachides", "d'arachides non déclarées", "aux arachides", true},
	"gluten":     {"Gluten", "gluten", "gluten", "du gluten", "de gluten non déclaré", "au gluten", false},
	"egg":        {"Egg", "egg", "egg", "des œufs", "d'œufs non déclarés", "aux œufs", true},
	"fish":       {"Fish", "fish", "fish", "du poisson", "de poisson non déclaré", "au poisson", false},
	"sesame":     {"Sesame", "sesame", "sesame", "du sésame", "de sésame non déclaré", "au sésame", false},
	"soy":        {"Soy", "soy", "soy", "du soja", "de soja non déclaré", "au soja", false},
	"sulphites":  {"Sulphites", "sulphites", "sulphites", "des sulfites", "de sulfites non déclarés", "aux sulfites", true},
	"tree_nut":   {"Tree nuts", "tree nuts", "tree nuts", "des noix", "de noix non déclarées", "aux noix", true},
	"wheat":      {"Wheat", "wheat", "wheat", "du blé", "de blé non déclaré", "au blé", false},
	"mustard":    {"Mustard", "mustard", "mustard", "de la moutarde", "de moutarde non déclarée", "à la moutarde", false},
	"crustacean": {"Crustaceans", "crustacean", "crustaceans", "des crustacés", "de crustacés non déclarés", "aux crustacés", true},
	"shellfish":  {"Shellfish", "shellfish", "shellfish", "des mollusques", "de mollusques non déclarés", "aux mollusques", true},
}

// allergenHazard builds the hazard of undeclared allergens keys.
func allergenHazard(keys []string) hazard {
	var en, allergyEN, np, undecl, allergyFR, names []string
	plural := len(keys) > 1
	for _, k := range keys {
		a := allergenTable[k]
		en = append(en, a.en)
		allergyEN = append(allergyEN, a.allergyEN)
		np = append(np, a.npFR)
		undecl = append(undecl, a.undeclFR)
		allergyFR = append(allergyFR, a.allergyFR)
		names = append(names, a.name)
		plural = plural || a.plural
	}
	figure, allergen := "qui ne figure pas", "an allergen"
	if plural {
		figure = "qui ne figurent pas"
	}
	if len(keys) > 1 {
		allergen = "allergens"
	}
	return hazard{
		key:     "allergen",
		titleEN: "undeclared " + joinList(en, "and"),
		titleFR: joinList(undecl, "et"),
		issueEN: "The recalled products contain " + joinList(en, "and") + ", " + allergen + " not declared on the label.",
		issueFR: "Les produits rappelés contiennent " + joinList(np, "et") + " " + figure + " sur l'étiquette.",
		sumEN: "People with an allergy to " + joinList(allergyEN, "or") +
			" could have a serious or life-threatening reaction if they consume the recalled products.",
		sumFR: "Les personnes allergiques " + joinList(allergyFR, "ou") +
			" pourraient avoir une réaction grave, voire mortelle, si elles consomment les produits rappelés.",
		allergens: names,
	}
}

// foodSubject draws what a food notice is about.
func foodSubject(r *rand.Rand) subject {
	s := subject{brand: foodBrand(r)}
	var it foodItem
	if chance(r, allergenShare) {
		for {
			it = pick(r, foodItems)
			if it.allergens != "" {
				break
			}
		}
		keys := strings.Fields(it.allergens)
		first := pick(r, keys)
		chosen := []string{first}
		if len(keys) > 1 && chance(r, 0.15) {
			if second := pick(r, keys); second != first {
				chosen = append(chosen, second)
			}
		}
		s.hazard = allergenHazard(chosen)
	} else {
		weights := make([]int, len(foodHazardOrder))
		for i, k := range foodHazardOrder {
			weights[i] = foodHazardWeights[k]
		}
		for {
			key := foodHazardOrder[pickWeighted(r, weights)]
			it = pick(r, foodItems)
			foreign := key == "met" || key == "pla" || key == "ext"
			if strings.Contains(it.hazards, key) || foreign && !it.raw {
				s.hazard = foodHazards[key]
				break
			}
		}
	}
	s.item = it.noun
	c := foodCategories[it.cat]
	s.catEN, s.catFR = c[0], c[1]
	s.sizes = it.sizes
	return s
}
