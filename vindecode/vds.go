package vindecode

import "strings"

// vdsRule is one row of a VDS table: a pattern over positions 4-8, an
// optional model-year range, and what a match means.
//
// The pattern has one element per position starting at position 4: a
// character, '.' for any character, or a set in brackets ("[FXW]", "[1-5]",
// "[^G]"). Positions the pattern does not reach match anything.
//
// A rule with a model names the model, and the brand too when make is set;
// the first model rule that matches wins. A rule without a model names only
// the brand of a WMI that brands share.
type vdsRule struct {
	mask     [5]uint64 // one bit per VIN character, per position 4-8
	from, to int       // model years, inclusive; 0 leaves that end open
	make     string    // brand, for WMIs that brands share; "" keeps the WMI's make
	model    string    // as Transport Canada writes it
}

// vinIndex maps a VIN character to a bit number for the pattern masks, -1
// for a character a VIN may not hold.
var vinIndex = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = int8(c - '0')
	}
	for c := 'A'; c <= 'Z'; c++ {
		if c != 'I' && c != 'O' && c != 'Q' {
			t[c] = int8(c-'A') + 10
		}
	}
	return t
}()

// anyChar is the mask of a position that matches every VIN character.
const anyChar = uint64(1)<<36 - 1

// compileVDS turns a pattern into one mask per position 4-8; ok is false
// when the pattern is malformed.
func compileVDS(p string) (m [5]uint64, ok bool) {
	for i := range m {
		m[i] = anyChar
	}
	pos := 0
	for i := 0; i < len(p); i++ {
		if pos == len(m) {
			return m, false
		}
		switch c := p[i]; c {
		case '.':
		case '[':
			end := strings.IndexByte(p[i:], ']')
			if end < 2 {
				return m, false
			}
			set, good := compileSet(p[i+1 : i+end])
			if !good {
				return m, false
			}
			m[pos] = set
			i += end
		default:
			if vinIndex[c] < 0 {
				return m, false
			}
			m[pos] = 1 << vinIndex[c]
		}
		pos++
	}
	return m, true
}

// compileSet reads the inside of a bracketed set: characters and ranges
// such as A-H, optionally negated by a leading ^.
func compileSet(s string) (uint64, bool) {
	neg := strings.HasPrefix(s, "^")
	if neg {
		s = s[1:]
	}
	var m uint64
	for i := 0; i < len(s); i++ {
		lo, hi := s[i], s[i]
		if i+2 < len(s) && s[i+1] == '-' {
			hi = s[i+2]
			i += 2
		}
		if lo > hi {
			return 0, false
		}
		for c := int(lo); c <= int(hi); c++ {
			if vinIndex[c] >= 0 {
				m |= 1 << vinIndex[c]
			}
		}
	}
	if m == 0 {
		return 0, false
	}
	if neg {
		m = anyChar &^ m
	}
	return m, true
}

// match reports whether the VIN s (17 characters) of model year year fits
// the rule. A rule with a year range never matches a VIN whose year could
// not be decoded.
func (r *vdsRule) match(s string, year int) bool {
	for i, m := range r.mask {
		if m == anyChar {
			continue
		}
		x := vinIndex[s[3+i]]
		if x < 0 || m&(1<<x) == 0 {
			return false
		}
	}
	if r.from == 0 && r.to == 0 {
		return true
	}
	return year != 0 && (r.from == 0 || year >= r.from) && (r.to == 0 || year <= r.to)
}
