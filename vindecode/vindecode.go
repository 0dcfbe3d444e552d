// Package vindecode tells what a Vehicle Identification Number says about
// its vehicle: the make and manufacturer from the world manufacturer
// identifier (WMI), the country of manufacture, the model year, and the
// model, and for WMIs that several brands share the brand, from the
// manufacturers' vehicle descriptor section (VDS). Decoder implements
// rappel.VINDecoder.
//
// What the decoder knows is data, not code: tab-separated tables embedded
// in the binary (tables/*.tsv: ISO 3780 countries, WMIs, and VDS rules by
// region), read once on the first decode, so that programs that never
// decode a VIN pay nothing. Each table says in its comment lines what its
// columns mean and where the knowledge comes from. The tables hold rules
// (a WMI, a pattern over positions 4-8, model years), never the VINs of
// particular vehicles.
package vindecode

import (
	"time"

	"github.com/rappel-ca/rappel"
)

// Decoder decodes VINs with the embedded tables. The zero value is ready
// to use, and safe for concurrent use.
type Decoder struct{}

var _ rappel.VINDecoder = Decoder{}

// Decode decodes v as of now: the make and manufacturer from the WMI, the
// country from its first two characters, the model year from position 10
// (never more than a year after now), and the brand and model from the
// manufacturer's VDS rules where they are known. Whatever v holds it never
// panics; a v that is not 17 characters long decodes to nothing.
func (Decoder) Decode(v rappel.VIN, now time.Time) rappel.DecodedVIN {
	if len(v) != vinLen {
		return rappel.DecodedVIN{}
	}
	s := string(v)
	t := loadTables()
	d := rappel.DecodedVIN{WMI: s[:3], Country: t.country(s[0], s[1])}
	w := t.lookup(s)
	if w != nil {
		d.WMI, d.Make, d.Manufacturer = w.wmi, w.make, w.mfr
		if w.country != "" {
			d.Country = w.country
		}
	}
	d.Year = modelYear(s, w.kindOf(), now)
	if w != nil {
		brand, model := w.decodeModel(s, d.Year)
		if brand != "" {
			d.Make = brand
		}
		d.Model = model
	}
	return d
}

// vinLen is the length of every VIN since model year 1981.
const vinLen = 17

// yearCode maps the position-10 character to its model year in the
// 1980-2009 cycle; 0 means the character is not a year code (I, O, Q, U, Z
// and 0 are never used there).
var yearCode = [256]int16{
	'A': 1980, 'B': 1981, 'C': 1982, 'D': 1983, 'E': 1984, 'F': 1985, 'G': 1986, 'H': 1987,
	'J': 1988, 'K': 1989, 'L': 1990, 'M': 1991, 'N': 1992, 'P': 1993, 'R': 1994, 'S': 1995,
	'T': 1996, 'V': 1997, 'W': 1998, 'X': 1999, 'Y': 2000,
	'1': 2001, '2': 2002, '3': 2003, '4': 2004, '5': 2005, '6': 2006, '7': 2007, '8': 2008, '9': 2009,
}

// modelYear reads the model year from position 10. The code repeats every
// 30 years. For light vehicles (passenger cars, and trucks and MPVs of
// 10,000 lb GVWR or less) NHTSA's rule (49 CFR 565.15) makes position 7
// choose: a digit there means 1980-2009, a letter 2010-2039 (Ford, GM and
// Ram follow the convention on their heavier vehicles too). Other vehicles
// (heavy trucks, buses, motorcycles, trailers, unknown WMIs) get the later
// cycle, which is wrong for a heavy truck or motorcycle built before 1996:
// their VINs carry nothing that tells the cycles apart. Either way a year
// more than one year after now is refused in favour of the other cycle,
// since no such vehicle exists yet.
func modelYear(s string, k vehicleKind, now time.Time) int {
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
