package vindecode

// vehicleKind is what a WMI's vehicles are, as far as decoding the model
// year is concerned (see modelYear).
type vehicleKind uint8

const (
	kindOther vehicleKind = iota // unknown WMI, trailers, motor homes
	kindLight                    // position 7 chooses the year cycle
	kindHeavy                    // heavier trucks, buses, incomplete vehicles
	kindMoto                     // motorcycles and other powersports
)

// kinds names the kinds in the kind column of wmi.tsv.
var kinds = map[string]vehicleKind{"other": kindOther, "light": kindLight, "heavy": kindHeavy, "moto": kindMoto}

// wmiEntry is one world manufacturer identifier, with the VDS rules that
// apply to it.
type wmiEntry struct {
	wmi     string      // 3 characters, or 6 (positions 1-3 and 12-14) for small makers
	make    string      // as Transport Canada writes it; "" when brands share the WMI
	mfr     string      // the company the WMI is assigned to
	kind    vehicleKind // chooses the model-year rule
	country string      // set where the WMI is not in its ISO 3780 country block
	brands  []vdsRule   // rules naming the brand only, in table order
	models  []vdsRule   // rules naming the model, in table order
}

func (w *wmiEntry) kindOf() vehicleKind {
	if w == nil {
		return kindOther
	}
	return w.kind
}

// decodeModel applies w's rules to the VIN s of model year year. The brand
// is that of the first brand rule that matches, unless the first model
// rule that matches names one; the model is that rule's.
func (w *wmiEntry) decodeModel(s string, year int) (brand, model string) {
	for i := range w.brands {
		if r := &w.brands[i]; r.match(s, year) {
			brand = r.make
			break
		}
	}
	for i := range w.models {
		r := &w.models[i]
		if !r.match(s, year) {
			continue
		}
		if r.make != "" {
			brand = r.make
		}
		return brand, r.model
	}
	return brand, ""
}

// lookup finds the WMI of a 17-character VIN, or nil. Small manufacturers
// (fewer than 1,000 vehicles a year) have a 9 in position 3 and their own
// code in positions 12-14; a VIN with a 9 there that matches no such code
// is looked up by its three characters like any other.
func (t *tables) lookup(s string) *wmiEntry {
	if s[2] == '9' {
		if e := t.wmi6[[6]byte{s[0], s[1], s[2], s[11], s[12], s[13]}]; e != nil {
			return e
		}
	}
	return t.wmi3[s[:3]]
}

// isoOrder is the order of the second character in ISO 3780's country
// ranges: letters without I, O and Q, then 1-9, then 0.
const isoOrder = "ABCDEFGHJKLMNPRSTUVWXYZ1234567890"

// isoRank maps a character to its place in isoOrder, 0 if it has none.
var isoRank = func() (r [256]uint8) {
	for i := 0; i < len(isoOrder); i++ {
		r[isoOrder[i]] = uint8(i + 1)
	}
	return r
}()

// countryRange is a block of country codes: a first character, and the
// inclusive range of second characters in isoOrder.
type countryRange struct {
	first  byte
	lo, hi byte
	name   string
}

// country is the country of manufacture that the first two characters of
// a VIN name, or "".
func (t *tables) country(a, b byte) string {
	r := isoRank[b]
	if r == 0 {
		return ""
	}
	for i := range t.countries {
		c := &t.countries[i]
		if c.first == a && r >= isoRank[c.lo] && r <= isoRank[c.hi] {
			return c.name
		}
	}
	return ""
}
