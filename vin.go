package rappel

import (
	"fmt"
	"time"
	"unicode/utf8"
)

// VIN is a validated 17-character Vehicle Identification Number: upper case,
// without spaces or dashes, with a right check digit wherever the check
// digit is mandatory (see ParseVIN). Only ParseVIN makes one; a VINDecoder
// still copes with any string converted to VIN.
type VIN string

// VINError says why a VIN was refused, in a sentence a client can act on.
type VINError struct{ Reason string }

func (e *VINError) Error() string { return e.Reason }

// vinLen is the length of every VIN since model year 1981.
const vinLen = 17

// vinValue is the transliteration of each VIN character for the check digit
// (49 CFR 565.15 / ISO 3779): A-H = 1-8, J-N = 1-5, P = 7, R = 9, S-Z = 2-9,
// digits their own value. 0 marks a character a VIN may not hold, which is
// safe because the only character whose value is 0, the digit 0, is
// recognised before the table is consulted.
var vinValue = [256]int8{
	'0': 0, '1': 1, '2': 2, '3': 3, '4': 4, '5': 5, '6': 6, '7': 7, '8': 8, '9': 9,
	'A': 1, 'B': 2, 'C': 3, 'D': 4, 'E': 5, 'F': 6, 'G': 7, 'H': 8,
	'J': 1, 'K': 2, 'L': 3, 'M': 4, 'N': 5, 'P': 7, 'R': 9,
	'S': 2, 'T': 3, 'U': 4, 'V': 5, 'W': 6, 'X': 7, 'Y': 8, 'Z': 9,
}

// vinWeight is the weight of each position in the check-digit sum; the
// check digit's own position weighs 0.
var vinWeight = [vinLen]int{8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2}

// vinChar reports whether c (upper case) may appear in a VIN.
func vinChar(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' && c != 'I' && c != 'O' && c != 'Q'
}

// ParseVIN upper-cases s, removes spaces and dashes, and checks that what is
// left is 17 characters of A-H, J-N, P, R-Z and 0-9. The check digit
// (position 9) must be right when the VIN was assigned in North America
// (see CheckDigitRequired); elsewhere ISO 3779 leaves position 9 to the
// manufacturer, so a VIN whose check digit does not add up is accepted and
// CheckDigitValid tells the caller. Errors are *VINError. A VIN given
// already in its canonical form is returned without allocating.
func ParseVIN(s string) (VIN, error) {
	var buf [vinLen]byte
	n, canonical := 0, true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '-':
			canonical = false
			continue
		case c >= 'a' && c <= 'z':
			c -= 'a' - 'A'
			canonical = false
		case c >= utf8.RuneSelf:
			r, _ := utf8.DecodeRuneInString(s[i:])
			return "", &VINError{Reason: fmt.Sprintf("the VIN may hold only the letters A to Z (except I, O and Q), the digits 0 to 9, spaces and dashes; %q at position %d is not allowed", r, n+1)}
		}
		switch {
		case c == 'I' || c == 'O' || c == 'Q':
			return "", &VINError{Reason: fmt.Sprintf("the VIN has the letter %c at position %d, but VINs never use I, O or Q because they look like 1 and 0; check whether it is the digit %c", c, n+1, lookalike(c))}
		case !vinChar(c):
			return "", &VINError{Reason: fmt.Sprintf("the VIN may hold only the letters A to Z (except I, O and Q), the digits 0 to 9, spaces and dashes; %q at position %d is not allowed", rune(c), n+1)}
		}
		if n < vinLen {
			buf[n] = c
		}
		n++
	}
	switch {
	case n == 0:
		return "", &VINError{Reason: "the VIN is empty; a VIN has 17 characters, usually printed on the driver's side of the dashboard and on the registration"}
	case n != vinLen:
		return "", &VINError{Reason: fmt.Sprintf("the VIN has %d characters but a VIN has exactly 17 (spaces and dashes aside); check for a missing or extra character", n)}
	}
	if want := vinCheckDigit(buf[:]); buf[8] != want && checkDigitRequired(buf[0], buf[1]) {
		return "", &VINError{Reason: fmt.Sprintf("the check digit of VIN %s (position 9) is %c but should be %c; one of its characters is probably mistyped", string(buf[:]), buf[8], want)}
	}
	if canonical {
		return VIN(s), nil
	}
	return VIN(buf[:]), nil
}

// lookalike is the digit that a forbidden letter is usually a misreading of.
func lookalike(c byte) byte {
	if c == 'I' {
		return '1'
	}
	return '0'
}

// vinCheckDigit is the check digit the 17 characters of b call for: the
// weighted sum of their values modulo 11, 10 written as X. Characters that a
// VIN may not hold count as 0.
func vinCheckDigit[T ~string | ~[]byte](b T) byte {
	sum := 0
	for i := 0; i < vinLen && i < len(b); i++ {
		sum += int(vinValue[b[i]]) * vinWeight[i]
	}
	if r := sum % 11; r < 10 {
		return byte('0' + r)
	}
	return 'X'
}

// VINCheckDigit returns the check digit for the 17 characters of vin (its
// own ninth character is ignored); generators use it to print valid VINs.
// It returns 0 when vin is not 17 characters long.
func VINCheckDigit(vin string) byte {
	if len(vin) != vinLen {
		return 0
	}
	return vinCheckDigit(vin)
}

// CheckDigitValid reports whether position 9 of v holds the check digit its
// other characters call for. It is false for a VIN that is not 17
// characters long.
func (v VIN) CheckDigitValid() bool {
	return len(v) == vinLen && v[8] == vinCheckDigit(v)
}

// CheckDigitRequired reports whether v was assigned where the check digit
// is mandatory: North America (see checkDigitRequired). It is false for a
// VIN that is not 17 characters long.
func (v VIN) CheckDigitRequired() bool {
	return len(v) == vinLen && checkDigitRequired(v[0], v[1])
}

// checkDigitRequired reports whether a VIN whose first two characters are
// a and b must carry a right check digit: one assigned in North America,
// where the rule (49 CFR 565, which Canada follows) makes position 9 a
// check digit. ISO 3780 gives North America the region codes 1 to 5 (1, 4
// and 5 the United States, 2 Canada, 3 Mexico and Central America), and in
// 2019 SAE moved 7F-70 from New Zealand to the United States (Tesla,
// Rivian). Elsewhere ISO 3779 leaves position 9 to the manufacturer:
// European and Russian makers often put a letter or a plain digit there.
func checkDigitRequired(a, b byte) bool {
	switch {
	case a >= '1' && a <= '5':
		return true
	case a == '7':
		return b >= 'F' && b <= 'Z' || b >= '0' && b <= '9'
	}
	return false
}

// DecodedVIN is what a VIN tells about the vehicle. A part that cannot be
// decoded is empty (the string fields) or 0 (Year).
type DecodedVIN struct {
	Make         string // as Transport Canada writes it, e.g. FORD, MERCEDES-BENZ
	Model        string // as Transport Canada writes it, e.g. F-150, CR-V
	Year         int    // model year
	WMI          string // world manufacturer identifier: positions 1-3, or 1-3 and 12-14
	Manufacturer string // the company the WMI is assigned to
	Country      string // country of manufacture, from positions 1-2
}

// VINDecoder tells what a VIN says about its vehicle. Decode decodes v as
// of now, since a model year more than a year ahead of now does not exist
// yet; it never panics and never fails, whatever v holds (any string
// converted to VIN): what it cannot decode it leaves empty.
type VINDecoder interface {
	Decode(v VIN, now time.Time) DecodedVIN
}
