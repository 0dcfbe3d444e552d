package rappel

import (
	"fmt"
	"time"
	"unicode/utf8"
)

// VIN is a validated 17-character Vehicle Identification Number: upper case,
// without spaces or dashes, with a right check digit. Only ParseVIN makes
// one; Decode still copes with any string converted to VIN.
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
// left is 17 characters of A-H, J-N, P, R-Z and 0-9 whose check digit
// (position 9) is right. Errors are *VINError. A VIN given already in its
// canonical form is returned without allocating.
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
	if want := vinCheckDigit(buf[:]); buf[8] != want {
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
func vinCheckDigit(b []byte) byte {
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
	return vinCheckDigit([]byte(vin))
}

// Decoded is what a VIN tells about the vehicle. A part that cannot be
// decoded is empty (the string fields) or 0 (Year).
type Decoded struct {
	Make         string // as Transport Canada writes it, e.g. FORD, MERCEDES-BENZ
	Model        string // as Transport Canada writes it, e.g. F-150, CR-V
	Year         int    // model year
	WMI          string // world manufacturer identifier: positions 1-3, or 1-3 and 12-14
	Manufacturer string // the company the WMI is assigned to
	Country      string // country of manufacture, from positions 1-2
}

// Decode decodes v as of now; see DecodeAt.
func (v VIN) Decode() Decoded { return v.DecodeAt(time.Now()) }

// DecodeAt decodes v: the make and manufacturer from the WMI, the country
// from its first two characters, the model year from position 10 (never
// more than a year after now), and the model from the manufacturer's VDS
// patterns where they are known. It never panics, whatever v holds.
func (v VIN) DecodeAt(now time.Time) Decoded {
	if len(v) != vinLen {
		return Decoded{}
	}
	s := string(v)
	d := Decoded{WMI: s[:3], Country: vinCountry(s[0], s[1])}
	w := lookupWMI(s)
	if w != nil {
		d.WMI, d.Make, d.Manufacturer = w.wmi, w.make, w.mfr
		if w.country != "" {
			d.Country = w.country
		}
	}
	d.Year = vinModelYear(s, w.kindOf(), now)
	if w != nil {
		if mk, model := decodeModel(w, s, d.Year); mk != "" || model != "" {
			if mk != "" {
				d.Make = mk
			}
			d.Model = model
		}
	}
	return d
}

// yearCode maps the position-10 character to its model year in the
// 1980-2009 cycle; 0 means the character is not a year code (I, O, Q, U, Z
// and 0 are never used there).
var yearCode = [256]int16{
	'A': 1980, 'B': 1981, 'C': 1982, 'D': 1983, 'E': 1984, 'F': 1985, 'G': 1986, 'H': 1987,
	'J': 1988, 'K': 1989, 'L': 1990, 'M': 1991, 'N': 1992, 'P': 1993, 'R': 1994, 'S': 1995,
	'T': 1996, 'V': 1997, 'W': 1998, 'X': 1999, 'Y': 2000,
	'1': 2001, '2': 2002, '3': 2003, '4': 2004, '5': 2005, '6': 2006, '7': 2007, '8': 2008, '9': 2009,
}

// vinModelYear reads the model year from position 10. The code repeats every
// 30 years. For light vehicles (passenger cars, and trucks and MPVs of
// 10,000 lb GVWR or less) NHTSA's rule (49 CFR 565.15) makes position 7
// choose: a digit there means 1980-2009, a letter 2010-2039 (Ford, GM and
// Ram follow the convention on their heavier vehicles too). Other vehicles
// (heavy trucks, buses, motorcycles, trailers, unknown WMIs) get the later
// cycle, which is wrong for a heavy truck or motorcycle built before 1996. Either way a year more than one year after now is
// refused in favour of the other cycle, since no such vehicle exists yet.
func vinModelYear(s string, k vehicleKind, now time.Time) int {
	early := int(yearCode[s[9]])
	if early == 0 {
		return 0
	}
	late, limit := early+30, now.Year()+1
	first, second := late, early
	if k == kindLight && s[6] >= '0' && s[6] <= '9' {
		first, second = early, late
	}
	if first <= limit {
		return first
	}
	if second <= limit {
		return second
	}
	return 0
}
