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

// Nearest returns the candidate closest to s by edit distance, compared
// case-insensitively, and whether it is close enough to suggest: within a
// third of the longer string's length, or a prefix either way.
func Nearest(s string, candidates []string) (string, bool) {
	best, bestD := "", -1
	ls := strings.ToLower(s)
	for _, c := range candidates {
		d := editDistance(ls, strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if bestD < 0 || ls == "" {
		return best, false
	}
	lb := strings.ToLower(best)
	n := max(len(ls), len(lb))
	return best, bestD*3 <= n || strings.HasPrefix(lb, ls) || strings.HasPrefix(ls, lb)
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	if len(a) > 256 {
		a = a[:256]
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
