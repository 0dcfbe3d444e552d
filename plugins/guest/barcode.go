package guest

import (
	"errors"
	"strings"

	"github.com/rappel-ca/rappel"
)

// PrintedCode is what a product's printed barcode says, read by the
// barcode rules (rappel.ParseGTIN): the home of the rule every normalizer
// of product tables shares.
type PrintedCode struct {
	// UPC is a valid barcode, as printed; 11 digits that are a UPC-A
	// without its leading 0 are the 12 digits of that UPC-A, the form the
	// package shows.
	UPC string
	// Prefix is the start, in digits, the codes of an item sold by weight
	// share ("Starting with 0235278", "Commençant par 0235278").
	Prefix string
	// Lot is digits that are no valid barcode (a code printed without its
	// check digit, or with a wrong one): still the notice's words for the
	// product, which someone holding the package may search for, so they
	// belong with its lot codes, never in its upc, which only a real
	// barcode may be.
	Lot string
	// IsPrefix is set when the value was introduced as a prefix, even one
	// refused.
	IsPrefix bool
}

// ErrPrefix is the error of a prefix that is not 1 to 13 digits.
var ErrPrefix = errors.New("a prefix is 1 to 13 digits")

// ReadPrintedCode reads a printed barcode. The error says why it is none
// of a barcode, a prefix or digits (ErrPrefix for a prefix, else the
// rappel.ParseGTIN error); the caller reports it.
func ReadPrintedCode(s string) (PrintedCode, error) {
	if rest, ok := cutPrefixWords(s); ok {
		digits := rappel.StripBarcode(rest)
		if digits != "" && len(digits) < 14 && rappel.IsDigits(digits) {
			return PrintedCode{Prefix: digits, IsPrefix: true}, nil
		}
		return PrintedCode{IsPrefix: true}, ErrPrefix
	}
	_, err := rappel.ParseGTIN(s)
	switch digits := rappel.StripBarcode(s); {
	case err == nil && len(digits) == 11:
		return PrintedCode{UPC: "0" + digits}, nil
	case err == nil:
		return PrintedCode{UPC: s}, nil
	case rappel.IsDigits(digits) && len(digits) <= 20:
		return PrintedCode{Lot: s}, nil
	}
	return PrintedCode{}, err
}

// prefixWords introduce a barcode prefix, lower case and without accents.
var prefixWords = []string{
	"starting with", "starts with", "beginning with", "begins with", "all codes starting with",
	"commencant par", "commence par", "debutant par", "debute par", "tous les codes commencant par",
}

// cutPrefixWords returns what follows the words that introduce a barcode
// prefix at the start of s, and whether there are such words.
func cutPrefixWords(s string) (string, bool) {
	fields := strings.Fields(s)
	for _, w := range prefixWords {
		n := len(strings.Fields(w))
		if len(fields) > n && strings.TrimSuffix(FoldKey(strings.Join(fields[:n], " ")), ":") == w {
			return strings.TrimLeft(strings.Join(fields[n:], " "), ": "), true
		}
	}
	return "", false
}

// ProductName is a product's name from its brand and its own name ("Maple
// Grove" "Organic mango purée"): the name alone when it starts with the
// brand or the brand is empty or "None", the brand alone when there is no
// name.
func ProductName(brand, name string) string {
	switch {
	case brand == "" || strings.EqualFold(brand, "none"):
		return name
	case name == "":
		return brand
	case strings.HasPrefix(FoldKey(name), FoldKey(brand)):
		return name
	}
	return brand + " " + name
}
