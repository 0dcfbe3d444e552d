package synth

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/rappel-ca/rappel"
)

// product is one product panel of a detail document.
type product struct {
	nameEN, nameFR string
	upc            string // as printed; "" when the product has none (an in-store code may lack its check digit)
	prefix         string // the start of the in-store codes of an item sold by weight
	lots           []string
	sizeEN, sizeFR string
	dropZero       bool // the detail API's shape prints its UPC-A as 11 digits, without the leading 0
}

// size is a package size in both languages ("1.5 kg" / "1,5 kg").
type size struct{ en, fr string }

// sizes builds sizes from English spellings, deriving the French ones: a
// decimal comma, and the unit words the catalogues use.
func sizes(en ...string) []size {
	out := make([]size, len(en))
	fr := strings.NewReplacer(".", ",", "tablets", "comprimés", "units", "unités", "unit", "unité",
		"pieces", "morceaux", "lozenges", "pastilles", "strips", "bandelettes", "pairs", "paires",
		"pair", "paire", "wipes", "lingettes", "cartridges", "cartouches", "gummies", "jujubes",
		"various sizes", "tailles variées", "sizes", "tailles", " to ", " à ", "set of", "ensemble de",
		"drawers", "tiroirs", "colours", "couleurs", "pods", "sachets", "twin", "simple", "bunch", "botte",
		"pre-rolls", "cigarettes préroulées", "bottles", "bouteilles")
	for i, s := range en {
		out[i] = size{s, fr.Replace(s)}
	}
	return out
}

// upc prints a valid barcode the way notices do: mostly a spaced UPC-A
// ("0 41798 00145 9"), sometimes its bare digits, sometimes an EAN-13. The
// check digit always holds: a wrong one would be dropped by the normalizer
// and reported, which is not what a clean corpus should exercise.
func upc(r *rand.Rand) string {
	if chance(r, 0.8) {
		body := pick(r, []string{"0", "0", "0", "0", "0", "6", "7", "8"}) + digits(r, 10)
		code := body + strconv.Itoa(rappel.CheckDigit(body))
		if chance(r, 0.8) {
			return code[:1] + " " + code[1:6] + " " + code[6:11] + " " + code[11:]
		}
		return code
	}
	body := pick(r, []string{"754", "755", "880", "890", "690", "800", "400", "750", "628"}) + digits(r, 9)
	code := body + strconv.Itoa(rappel.CheckDigit(body))
	if chance(r, 0.5) {
		return code[:1] + " " + code[1:7] + " " + code[7:]
	}
	return code
}

// byWeight are the food categories whose items are also sold by weight,
// labelled in the store with in-store codes.
var byWeight = map[string]bool{
	"Meat and poultry": true, "Dairy": true, "Fish and seafood": true, "Fruits and vegetables": true,
	"Bakery products": true, "Prepared meals": true,
}

// inStoreShare is the share of the products of those categories that are
// items sold by weight.
const inStoreShare = 0.2

// inStoreCode draws how a notice lists the barcode of an item sold by
// weight. Such an item's in-store code is a UPC-A of number system 2 (an
// EAN-13 starting 02): five digits of item, five of price, a check digit.
// Since the price differs from package to package, the notice mostly lists
// the start every code shares (prefix, "0235278"); sometimes one whole code
// (upc); and sometimes a code printed with a zero price and no check digit,
// which is no valid barcode (upc too, as printed).
func inStoreCode(r *rand.Rand) (upc, prefix string) {
	item := "02" + digits(r, 5)
	switch pickWeighted(r, []int{60, 30, 10}) {
	case 0:
		return "", item
	case 1:
		body := item + digits(r, 5)
		return body + strconv.Itoa(rappel.CheckDigit(body)), ""
	}
	for rappel.CheckDigit(item+"0000") == 0 {
		// A zero check digit would make the code valid after all.
		item = "02" + digits(r, 5)
	}
	return item + " 00000", ""
}

// digits returns n random decimal digits.
func digits(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + r.IntN(10))
	}
	return string(b)
}

// cfiaMonths are the two-letter month codes of Canadian best-before dates.
var cfiaMonths = []string{"JA", "FE", "MR", "AL", "MA", "JN", "JL", "AU", "SE", "OC", "NO", "DE"}

// lotCodes returns one to three lot codes for a product of recall type typ
// recalled on d. No code holds ", " or "; ": the normalizer splits the
// "Lot or code" value on both.
func lotCodes(r *rand.Rand, typ int, d day) []string {
	n := pickWeighted(r, []int{0, 60, 25, 15})
	out := make([]string, 0, n)
	for range n {
		out = append(out, lotCode(r, typ, d))
	}
	return out
}

// lotCode returns one lot code in the style of the recall type.
func lotCode(r *rand.Rand, typ int, d day) string {
	later := (d + day(between(r, 20, 700))).time()
	earlier := (d - day(between(r, 5, 200))).time()
	switch typ {
	case typeFood:
		switch r.IntN(6) {
		case 0:
			return fmt.Sprintf("Best Before %d %s %02d", later.Year(), cfiaMonths[later.Month()-1], later.Day())
		case 1:
			return fmt.Sprintf("BB %s", later.Format("2006/01/02"))
		case 2:
			return fmt.Sprintf("Lot %s", digits(r, 5))
		case 3:
			return fmt.Sprintf("Packed on %s", earlier.Format("2006-01-02"))
		case 4:
			return fmt.Sprintf("Use by %s", later.Format("02/01/2006"))
		}
		return "All codes where the first digits are " + digits(r, 4)
	case typeHealth:
		return fmt.Sprintf("Lot %s%s (Exp. %s)", upperLetters(r, 1), digits(r, 5), later.Format("2006-01"))
	case typeConsumer:
		switch r.IntN(3) {
		case 0:
			return fmt.Sprintf("Model %s-%s", upperLetters(r, 2), digits(r, 4))
		case 1:
			return fmt.Sprintf("Batch %s", earlier.Format("0601"))
		}
		return fmt.Sprintf("Serial numbers %s to %s", digits(r, 3)+"000", digits(r, 3)+"999")
	case typeMedical:
		switch r.IntN(3) {
		case 0:
			return "Lot " + digits(r, 8)
		case 1:
			return "REF " + upperLetters(r, 3) + "-" + digits(r, 4)
		}
		return fmt.Sprintf("Software version %d.%d.%d", between(r, 1, 5), r.IntN(10), r.IntN(20))
	}
	return fmt.Sprintf("Lot %s-%s", earlier.Format("060102"), upperLetters(r, 2))
}

// upperLetters returns n random capital letters.
func upperLetters(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('A' + r.IntN(26))
	}
	return string(b)
}
