package rappel

import (
	"fmt"
	"strings"
)

// GTIN is a product barcode in its 14-digit GTIN form, the key every printed
// form of the same code (UPC-A, UPC-E, EAN-8, EAN-13, GTIN-14) shares.
type GTIN string

// BarcodeError says why a barcode was refused, in a sentence, and for a wrong
// check digit which digit would be right.
type BarcodeError struct {
	Reason    string
	WantCheck int // the right check digit, or -1
}

func (e *BarcodeError) Error() string { return e.Reason }

// StripBarcode removes the spaces and dashes a barcode is often printed
// with, and the asterisk a correction notice marks a corrected code with
// ("64420000224*").
func StripBarcode(s string) string {
	s = strings.TrimSuffix(strings.TrimSpace(s), "*")
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return -1
		}
		return r
	}, s)
}

// ParseGTIN reads a UPC-A (12 digits), UPC-E (6 or 8 digits), EAN-8, EAN-13
// or GTIN-14, printed with or without spaces and dashes (and a correction
// notice's trailing asterisk), checks its check digit and returns its
// GTIN-14 form. An 8-digit code is read as UPC-E when it starts with 0 or 1
// and its UPC-E check digit holds, as EAN-8 otherwise; when neither check
// digit holds, the error's WantCheck is the UPC-E one. An 11-digit code is
// a UPC-A printed without its leading 0, as CFIA notices print most of
// them ("64420001412" is "064420001412"): it is read so, and its check
// digit checked as the 12-digit code's. Errors are *BarcodeError.
func ParseGTIN(s string) (GTIN, error) {
	d := StripBarcode(s)
	if d == "" {
		return "", &BarcodeError{Reason: "the barcode is empty", WantCheck: -1}
	}
	for _, r := range d {
		if r < '0' || r > '9' {
			return "", &BarcodeError{Reason: fmt.Sprintf("the barcode may hold only digits, spaces and dashes, not %s", Quote(string(r))), WantCheck: -1}
		}
	}
	switch len(d) {
	case 6:
		return fromUPCE("0" + d + "?")
	case 8:
		if d[0] == '0' || d[0] == '1' {
			upce, ean := checkDigit(expandUPCE(d[:7])), checkDigit(d[:7])
			switch got := int(d[7] - '0'); {
			case got == upce:
				return fromUPCE(d)
			case got != ean:
				// Neither reading holds; a UPC-E is the likelier, since
				// GS1 keeps EAN-8 codes starting with 0 or 1 for
				// restricted use.
				return "", &BarcodeError{Reason: fmt.Sprintf("the check digit of %s is %d but should be %d if it is a UPC-E, or %d if it is an EAN-8", Quote(d), got, upce, ean), WantCheck: upce}
			}
		}
		return fromFull(d)
	case 11:
		g, err := fromFull("0" + d)
		if be, ok := err.(*BarcodeError); ok {
			be.Reason = fmt.Sprintf("the barcode has 11 digits, read as a UPC-A printed without its leading 0 (%s), and %s", "0"+d, be.Reason)
		}
		return g, err
	case 12, 13, 14:
		return fromFull(d)
	}
	return "", &BarcodeError{Reason: fmt.Sprintf("the barcode has %d digits; a UPC-A has 12 (11 when printed without its leading 0), an EAN-13 13, a GTIN-14 14, an EAN-8 8 and a UPC-E 6 or 8", len(d)), WantCheck: -1}
}

// fromFull checks a code whose last digit is its check digit and pads it to 14.
func fromFull(d string) (GTIN, error) {
	body := d[:len(d)-1]
	want := checkDigit(body)
	if got := int(d[len(d)-1] - '0'); got != want {
		return "", &BarcodeError{Reason: fmt.Sprintf("the check digit of %s is %d but should be %d", Quote(d), got, want), WantCheck: want}
	}
	return GTIN(strings.Repeat("0", 14-len(d)) + d), nil
}

// fromUPCE expands an 8-digit UPC-E (number system, 6 digits, check) to its
// UPC-A; a '?' check digit (6-digit input) is computed rather than checked.
func fromUPCE(d string) (GTIN, error) {
	a := expandUPCE(d[:7])
	want := checkDigit(a)
	if d[7] != '?' {
		if got := int(d[7] - '0'); got != want {
			return "", &BarcodeError{Reason: fmt.Sprintf("the check digit of UPC-E %s is %d but should be %d", Quote(d), got, want), WantCheck: want}
		}
	}
	return GTIN("00" + a + string(rune('0'+want))), nil
}

// expandUPCE turns the number system and six digits of a UPC-E into the 11
// digits of the UPC-A it abbreviates.
func expandUPCE(e string) string {
	ns, m := e[:1], e[1:7]
	switch m[5] {
	case '0', '1', '2':
		return ns + m[0:2] + m[5:6] + "0000" + m[2:5]
	case '3':
		return ns + m[0:3] + "00000" + m[3:5]
	case '4':
		return ns + m[0:4] + "00000" + m[4:5]
	}
	return ns + m[0:5] + "0000" + m[5:6]
}

// checkDigit is the GS1 check digit of body: weights 3,1,3,… from the right.
func checkDigit(body string) int {
	sum := 0
	for i := 0; i < len(body); i++ {
		v := int(body[len(body)-1-i] - '0')
		if i%2 == 0 {
			v *= 3
		}
		sum += v
	}
	return (10 - sum%10) % 10
}

// CheckDigit returns the GS1 check digit for a string of digits; it is what
// generators use to print valid codes.
func CheckDigit(body string) int { return checkDigit(body) }

// MinUPCPrefix is the fewest digits a product's upc_prefix needs to be
// looked up by barcode. An in-store code for an item sold by weight is the
// number system 2, five digits naming the item, then digits encoding the
// price or weight and a check digit; notices print the item's prefix in the
// EAN-13 frame, "0" + "2" + the item's five digits ("0235278"). Six digits
// still name a handful of items; fewer would match most of a store.
const MinUPCPrefix = 6

// MaxUPCPrefixGTIN is the longest GTIN-14 prefix a upc_prefix stands for:
// all digits but the check digit. A longer one would be a whole code.
const MaxUPCPrefixGTIN = 13

// UPCPrefixGTINs returns the GTIN-14 prefixes the codes starting with a
// product's upc_prefix p share, so that a full code, in whatever form it
// was printed or scanned, is matched by comparing its GTIN-14's first
// digits. A prefix is read as the start of the code's 13-digit EAN-13
// printing, the form the notices use (a UPC-A's EAN-13 printing is "0" and
// its 12 digits): its GTIN-14 prefix is "0" + p. A prefix starting with 2
// may also be the start of a UPC-A printed without that leading 0, the
// in-store number system of UPC-A, so it is also read as "00" + p; both
// readings are in-store ranges (EAN-13 20 to 29 and UPC-A 2), so neither
// reaches a code a manufacturer was assigned. A prefix starting with 0 is
// never read as UPC-A: UPC-A's number system 0 holds manufacturers' codes,
// which an in-store prefix must not match. It returns nil when p is not
// digits only, has fewer than MinUPCPrefix digits, or no reading leaves the
// check digit free.
func UPCPrefixGTINs(p string) []string {
	if len(p) < MinUPCPrefix || !IsDigits(p) {
		return nil
	}
	var out []string
	if len(p)+1 <= MaxUPCPrefixGTIN {
		out = append(out, "0"+p)
	}
	if p[0] == '2' && len(p)+2 <= MaxUPCPrefixGTIN {
		out = append(out, "00"+p)
	}
	return out
}
