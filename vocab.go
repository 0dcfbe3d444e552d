package rappel

import "strings"

// Vocabulary is a closed set of values a field or parameter may take, in the
// order the spec lists them.
type Vocabulary []string

// Has reports whether v is one of the vocabulary's values.
func (v Vocabulary) Has(s string) bool {
	for _, x := range v {
		if x == s {
			return true
		}
	}
	return false
}

// String lists the values, comma separated, for messages.
func (v Vocabulary) String() string { return strings.Join(v, ", ") }

// Language codes.
const (
	LangEN = "en"
	LangFR = "fr"
)

// Recall types.
const (
	TypeFood            = "food"
	TypeVehicle         = "vehicle"
	TypeHealthProduct   = "health_product"
	TypeConsumerProduct = "consumer_product"
	TypeMedicalDevice   = "medical_device"
	TypeCannabis        = "cannabis"
)

// Agencies.
const (
	AgencyCFIA            = "CFIA"
	AgencyHealthCanada    = "Health Canada"
	AgencyTransportCanada = "Transport Canada"
	StatusActive          = "active"
	StatusArchived        = "archived"
)

// The spec's filter vocabularies.
var (
	RecallTypes   = Vocabulary{TypeFood, TypeVehicle, TypeHealthProduct, TypeConsumerProduct, TypeMedicalDevice, TypeCannabis}
	Agencies      = Vocabulary{AgencyCFIA, AgencyHealthCanada, AgencyTransportCanada}
	HazardClasses = Vocabulary{"class_1", "class_2", "class_3"}
	Allergens     = Vocabulary{"milk", "peanut", "gluten", "egg", "fish", "sesame", "soy", "sulphites", "tree_nut", "wheat", "mustard", "crustacean", "shellfish"}
	Langs         = Vocabulary{LangEN, LangFR}
	Statuses      = Vocabulary{StatusActive, StatusArchived}
)

// Nearest returns the candidate closest to s, compared case-insensitively,
// and whether it is close enough to suggest. A candidate that s begins (or
// that begins s) is closest; otherwise the one at the smallest edit
// distance, suggested when that is within a third of the longer length.
func Nearest(s string, candidates []string) (string, bool) {
	ls := strings.ToLower(s)
	if ls == "" || len(candidates) == 0 {
		return "", false
	}
	best, bestD := "", -1
	for _, c := range candidates {
		lc := strings.ToLower(c)
		if strings.HasPrefix(lc, ls) || strings.HasPrefix(ls, lc) {
			return c, true
		}
		if d := editDistance(ls, lc); bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	// editDistance reads 256 bytes of each string at most: so do the
	// lengths it is weighed against, or a long input would look near.
	return best, bestD*3 <= max(min(len(ls), 256), min(len(best), 256))
}

// editDistance is OSADistance between a and b as parameter names, read
// to 256 bytes each: the swap of two neighbours is the most common typo in
// a parameter name ("lnag").
func editDistance(a, b string) int {
	if len(a) > 256 {
		a = a[:256]
	}
	if len(b) > 256 {
		b = b[:256]
	}
	return OSADistance([]rune(a), []rune(b))
}

// OSADistance is the optimal string alignment distance between a and b, in
// letters: Levenshtein plus the swap of two neighbours as one edit, no
// letter edited twice. It is the one edit distance of the module: the
// nearest parameter or value a message suggests, the typo correction of
// searches and the judged sets' misspellings all measure with it. Three
// rows are kept: the one before the previous is what a swap looks back
// to.
func OSADistance(a, b []rune) int {
	prev2, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, sub)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
