package synth

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Brands and firms are invented: a synthetic corpus must not say that a real
// company recalled something. They are built from parts so that tens of
// thousands of notices do not keep naming the same dozen brands.
var (
	foodBrandHeads = []string{
		"Maple Ridge", "Northern Harvest", "Prairie Gold", "Laurentian", "Coastal Bay", "Boreal",
		"Cedar Grove", "Golden Valley", "Summit", "Evergreen", "Blue Heron", "Red River", "Silver Birch",
		"True North", "Great Lakes", "Pacific Crest", "Atlantic Shore", "Fraser Valley", "Okanagan Sun",
		"Rocky Mountain", "Aurora", "Loon Lake", "Beaver Creek", "St. Lawrence", "Heritage", "Lakeside",
		"Sunrise", "Wild Rose", "Bluenose", "Tamarack", "Muskoka", "Kawartha", "Niagara Orchards",
	}
	foodBrandTails = []string{
		"Farms", "Foods", "Kitchen", "Naturals", "Pantry", "Bakery", "Creamery", "Organics",
		"Gourmet", "Select", "Fine Foods", "Provisions", "Market", "Dairy", "Smokehouse", "Orchards",
	}
	foodBrandWhole = []string{
		"Les Délices de l'Érable", "Ferme Beaulieu", "Fromagerie du Lac-Bleu", "Boulangerie Sainte-Rose",
		"La Belle Fermière", "Saveurs du Terroir", "Maison Gagnon", "Le Petit Marché", "Érablière Tremblay",
		"Golden Lotus", "Jade Garden", "Seoul Kitchen", "Sakura Table", "Bella Cucina", "Nonna Lucia",
		"Olympia Deli", "Sahara Sweets", "Haveli Spice", "Saigon Star", "Manila Bay", "Casa Oaxaca",
		"Smith & Sons", "Baker & Rye", "Leaf & Vine", "Salt & Ember", "Mill & Stone", "Hearth & Harvest",
	}
	goodsBrandHeads = []string{
		"Kid", "Tot", "Tech", "Volt", "Home", "Cozy", "Bright", "Aqua", "Urban", "Glow", "North",
		"Peak", "Zen", "Nova", "Snug", "Pure", "Smart", "Happy", "Little", "Star", "Maple", "Polar",
	}
	goodsBrandTails = []string{
		"zone", "ly", "nest", "tek", "wave", "craft", "line", "works", "max", " Pro", " Plus",
		" Kids", " Life", " Home", "spark", "ware",
	}
	healthBrands = []string{
		"Pharmacore", "NorthStar Pharma", "Vitaline", "Pure Source Naturals", "HerbaVita", "Maplewood",
		"Nordic Vitality", "Lotus Herbals", "Zenith Labs", "Canamed", "Boreal Health", "Clearwell",
		"Apex Generics", "Sanoria", "VitaTrue", "Green Apothecary", "Evermed", "Kinetic Nutrition",
		"Dr. Willow", "Medisol", "Purelyfe", "Arbor Pharma", "Solace Naturals", "Ironwood Labs",
	}
	deviceBrands = []string{
		"MediCore", "Vitalis Medical", "OrthoGen", "CardioSense", "NeuroTech Systems", "Sterimed",
		"Precisa Diagnostics", "Accura Health", "Lumen Surgical", "BioNorth", "Helix Medical",
		"Verity Diagnostics", "Axiom Orthopaedics", "Clarion Health", "Respira", "Pulsar Devices",
	}
	cannabisHeads = []string{"Prairie", "Pine", "Cedar", "North", "Frost", "River", "Maple", "Glacier", "Twin Peaks", "Emerald", "Birch", "Harbour"}
	cannabisTails = []string{"Leaf", "Bloom", "Grown", "Craft", "Cultivation", "Botanicals", "Farms", "Bud Co.", "Growers", "Greenhouse"}

	companySuffixes   = []string{"Inc.", "Ltd.", "Ltée", "Corp.", "Co.", "Limited", "Inc."}
	foreignMakerHeads = []string{"Shenzhen", "Ningbo", "Dongguan", "Guangzhou", "Xiamen", "Taizhou", "Yiwu"}
	foreignMakerTails = []string{"Technology Co., Ltd.", "Electronics Co., Ltd.", "Industrial Co., Ltd.", "Trading Co., Ltd.", "Manufacturing Co., Ltd."}
)

// foodBrand returns an invented food brand.
func foodBrand(r *rand.Rand) string {
	if chance(r, 0.3) {
		return pick(r, foodBrandWhole)
	}
	return pick(r, foodBrandHeads) + " " + pick(r, foodBrandTails)
}

// goodsBrand returns an invented consumer-goods brand.
func goodsBrand(r *rand.Rand) string {
	for {
		head, tail := pick(r, goodsBrandHeads), pick(r, goodsBrandTails)
		// "Kid Kids" and "Home Home" read as mistakes, not brands.
		if !strings.Contains(strings.ToLower(tail), strings.ToLower(head)) {
			return head + tail
		}
	}
}

// cannabisBrand returns an invented cannabis brand.
func cannabisBrand(r *rand.Rand) string {
	return pick(r, cannabisHeads) + " " + pick(r, cannabisTails)
}

// firm returns the company behind brand: the brand with a corporate suffix,
// sometimes a distributor's name instead.
func firm(r *rand.Rand, brand string) string {
	if chance(r, 0.8) {
		return brand + " " + pick(r, companySuffixes)
	}
	return pick(r, foodBrandHeads) + " Distribution " + pick(r, companySuffixes)
}

// foreignMaker returns an overseas manufacturer's name; these hold commas,
// which is why Companies is a "; " list.
func foreignMaker(r *rand.Rand) string {
	return pick(r, foreignMakerHeads) + " " + pick(r, goodsBrandHeads) + pick(r, []string{"tek", "wei", "sun", "hui"}) + " " + pick(r, foreignMakerTails)
}

// The places a notice names.
var (
	provinces = []string{
		"Alberta", "British Columbia", "Manitoba", "New Brunswick", "Newfoundland and Labrador",
		"Nova Scotia", "Ontario", "Prince Edward Island", "Quebec", "Saskatchewan",
		"Northwest Territories", "Nunavut", "Yukon",
	}
	provinceWeights = []int{12, 14, 5, 4, 3, 5, 30, 2, 22, 4, 1, 1, 1}
	origins         = []string{
		"Canada", "United States", "China", "Mexico", "Italy", "South Korea", "Vietnam", "India",
		"Thailand", "Türkiye", "Germany", "Taiwan", "Peru", "Chile", "France", "Poland", "Japan",
	}
	originWeights = []int{30, 25, 18, 5, 4, 4, 3, 3, 3, 2, 2, 2, 1, 1, 2, 1, 2}
	monthsEN      = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
)

// distribution returns a Distribution value: "National" or a ", " list of
// provinces and territories.
func distribution(r *rand.Rand) string {
	if chance(r, 0.3) {
		return "National"
	}
	n := pickWeighted(r, []int{0, 40, 25, 15, 10, 6, 4})
	seen := make(map[int]bool, n)
	var out []string
	for len(out) < n {
		i := pickWeighted(r, provinceWeights)
		if !seen[i] {
			seen[i] = true
			out = append(out, provinces[i])
		}
	}
	return strings.Join(out, ", ")
}

// origin returns a Place of origin value.
func origin(r *rand.Rand) string { return origins[pickWeighted(r, originWeights)] }

// unitsSold returns a Units sold value such as "2,400" or "Approximately 150".
func unitsSold(r *rand.Rand) string {
	n := between(r, 1, 400) * pick(r, []int{1, 1, 5, 10, 50, 100})
	s := groupThousands(n)
	switch r.IntN(4) {
	case 0:
		return "Approximately " + s
	case 1:
		return s + " units"
	}
	return s
}

// groupThousands writes n with comma thousands separators.
func groupThousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// timePeriodSold returns a Time period sold value ending on or before d.
func timePeriodSold(r *rand.Rand, d day) string {
	end := d - day(between(r, 0, 60))
	start := end - day(between(r, 30, 900))
	s, e := start.time(), end.time()
	if chance(r, 0.3) {
		return fmt.Sprintf("%s to %s", start, end)
	}
	return fmt.Sprintf("%s %d to %s %d", monthsEN[s.Month()-1], s.Year(), monthsEN[e.Month()-1], e.Year())
}
