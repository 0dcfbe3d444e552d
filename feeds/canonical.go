package feeds

import (
	"bytes"
	"encoding/csv"
	"errors"
	"html"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/rappel-ca/rappel"
)

// Raw records are compared by a hash of their content, not of their bytes
// (docs/feeds.md, "Live feeds"): each item (a JSON row or document, a CSV row) is
// put in a canonical form first, in which key order, whitespace between
// JSON tokens, JSON escapes, CSV quoting, line endings and the spelling of
// HTML entities do not count. An agency that changes its JSON writer (the
// dump escaping every "/" one year and not the next) then changes no hash,
// so nothing is normalized or fetched again. The data kept is still the
// upstream's bytes: the plugins read what the agency wrote.
//
// Hashes of this definition start with contentHashPrefix. A hash without
// it is of the first definition, over the bytes as fetched: stores written
// before keep those until the refresh that next reads them upgrades them
// (upgradeHashes, resolveVersions).
const contentHashPrefix = "c1:"

// byteHash reports that h is a hash of the first definition, taken over
// the raw bytes.
func byteHash(h string) bool { return h != "" && !strings.HasPrefix(h, contentHashPrefix) }

// canonicalizer returns one item of a raw record in canonical form.
type canonicalizer func(item []byte) []byte

// contentHash is the hash of lists with every item made canonical.
func contentHash(canon canonicalizer, lists [][][]byte) string {
	c := make([][][]byte, len(lists))
	for i, l := range lists {
		c[i] = make([][]byte, len(l))
		for j, item := range l {
			c[i][j] = canon(item)
		}
	}
	return canonicalHash(c)
}

// canonicalHash is the hash of lists already in canonical form.
func canonicalHash(lists [][][]byte) string {
	return contentHashPrefix + rappel.HashBytes(frame(lists...))
}

// dataHash is the content hash of a raw record's framed data.
func dataHash(canon canonicalizer, data []byte) (string, error) {
	framed, err := unpack(data)
	if err != nil {
		return "", err
	}
	lists, err := unframe(framed)
	if err != nil {
		return "", err
	}
	return contentHash(canon, lists), nil
}

// canonicalJSON returns a JSON value in canonical form: object keys in
// byte order, no whitespace, strings escaped only where JSON requires
// (quote, backslash, control characters) with their HTML entities spelled
// canonically (canonicalText) and invalid UTF-8 read as encoding/json reads
// it, numbers as written. Duplicate keys keep the last value, as
// encoding/json does. Bytes that are not one JSON value are their own
// canonical form.
//
// It is a parser of its own, one pass over the bytes that reuses its
// buffers: every row of a changed dump goes through it, and a generic
// decode into maps allocates a map and a string for every value.
func canonicalJSON(b []byte) []byte {
	p := canonPool.Get().(*jsonCanon)
	defer canonPool.Put(p)
	p.src, p.i = b, 0
	out, ok := p.value(make([]byte, 0, len(b)), 0)
	ok = ok && p.skipSpace() == len(b)
	p.src = nil
	if !ok {
		return b
	}
	return out
}

// canonPool keeps parsers, whose buffers are reused from row to row.
var canonPool = sync.Pool{New: func() any { return new(jsonCanon) }}

// maxJSONDepth bounds nesting, as encoding/json does: a value nests at
// most this many arrays and objects.
const maxJSONDepth = 10000

// jsonCanon parses src from i, writing the canonical form.
type jsonCanon struct {
	src []byte
	i   int
	// vals and members hold, per nesting depth, an object's members and
	// their canonical values until they are sorted.
	vals    [][]byte
	members [][]member
}

// skipSpace skips JSON whitespace and returns the position after it.
func (p *jsonCanon) skipSpace() int {
	for p.i < len(p.src) {
		switch p.src[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return p.i
		}
	}
	return p.i
}

// value appends the canonical form of the value at p.i to dst.
func (p *jsonCanon) value(dst []byte, depth int) ([]byte, bool) {
	if p.skipSpace() == len(p.src) {
		return dst, false
	}
	switch c := p.src[p.i]; {
	case (c == '{' || c == '[') && depth >= maxJSONDepth:
		return dst, false
	case c == '{':
		return p.object(dst, depth)
	case c == '[':
		return p.array(dst, depth)
	case c == '"':
		s, ok := p.str()
		if bytes.IndexByte(s, '&') >= 0 {
			s = []byte(canonicalText(string(s)))
		}
		return appendJSONString(dst, s), ok
	case c == 't':
		return p.literal(dst, "true")
	case c == 'f':
		return p.literal(dst, "false")
	case c == 'n':
		return p.literal(dst, "null")
	default:
		return p.number(dst)
	}
}

func (p *jsonCanon) literal(dst []byte, lit string) ([]byte, bool) {
	if !bytes.HasPrefix(p.src[p.i:], []byte(lit)) {
		return dst, false
	}
	p.i += len(lit)
	return append(dst, lit...), true
}

// number appends a JSON number as written, after checking its grammar.
func (p *jsonCanon) number(dst []byte) ([]byte, bool) {
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.src) && p.src[p.i] >= '0' && p.src[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.i < len(p.src) && p.src[p.i] == '-' {
		p.i++
	}
	if n := digits(); n == 0 || n > 1 && p.src[p.i-n] == '0' {
		return dst, false
	}
	if p.i < len(p.src) && p.src[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return dst, false
		}
	}
	if p.i < len(p.src) && (p.src[p.i] == 'e' || p.src[p.i] == 'E') {
		p.i++
		if p.i < len(p.src) && (p.src[p.i] == '+' || p.src[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return dst, false
		}
	}
	return append(dst, p.src[start:p.i]...), true
}

func (p *jsonCanon) array(dst []byte, depth int) ([]byte, bool) {
	p.i++ // [
	dst = append(dst, '[')
	if p.skipSpace() < len(p.src) && p.src[p.i] == ']' {
		p.i++
		return append(dst, ']'), true
	}
	for {
		var ok bool
		if dst, ok = p.value(dst, depth+1); !ok {
			return dst, false
		}
		if p.skipSpace() == len(p.src) {
			return dst, false
		}
		switch p.src[p.i] {
		case ',':
			p.i++
			dst = append(dst, ',')
		case ']':
			p.i++
			return append(dst, ']'), true
		default:
			return dst, false
		}
	}
}

// member is an object member: its key and where its canonical value lies
// in the object's buffer.
type member struct {
	key        []byte
	start, end int
}

func (p *jsonCanon) object(dst []byte, depth int) ([]byte, bool) {
	p.i++ // {
	if p.skipSpace() < len(p.src) && p.src[p.i] == '}' {
		p.i++
		return append(dst, '{', '}'), true
	}
	for len(p.vals) <= depth {
		p.vals, p.members = append(p.vals, nil), append(p.members, nil)
	}
	vals, members := p.vals[depth][:0], p.members[depth][:0]
	defer func() { p.vals[depth], p.members[depth] = vals[:0], members[:0] }()
	for {
		if p.skipSpace() == len(p.src) || p.src[p.i] != '"' {
			return dst, false
		}
		key, ok := p.str()
		if !ok || p.skipSpace() == len(p.src) || p.src[p.i] != ':' {
			return dst, false
		}
		p.i++
		start := len(vals)
		if vals, ok = p.value(vals, depth+1); !ok {
			return dst, false
		}
		members = append(members, member{key, start, len(vals)})
		if p.skipSpace() == len(p.src) {
			return dst, false
		}
		if p.src[p.i] == '}' {
			p.i++
			break
		}
		if p.src[p.i] != ',' {
			return dst, false
		}
		p.i++
	}
	// Stable, so that of duplicate keys the last is kept.
	slices.SortStableFunc(members, func(a, b member) int { return bytes.Compare(a.key, b.key) })
	dst = append(dst, '{')
	first := true
	for i, m := range members {
		if i+1 < len(members) && bytes.Equal(members[i+1].key, m.key) {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendJSONString(dst, m.key)
		dst = append(dst, ':')
		dst = append(dst, vals[m.start:m.end]...)
	}
	return append(dst, '}'), true
}

// str reads the string at p.i and returns its text, with each invalid
// UTF-8 byte and lone surrogate read as U+FFFD, as encoding/json reads
// them.
func (p *jsonCanon) str() ([]byte, bool) {
	p.i++ // "
	start := p.i
	for p.i < len(p.src) {
		c := p.src[p.i]
		switch {
		case c == '"':
			raw := p.src[start:p.i]
			if !utf8.Valid(raw) {
				return p.escapedStr(start)
			}
			p.i++
			return raw, true
		case c == '\\':
			return p.escapedStr(start)
		case c < 0x20:
			return nil, false
		}
		p.i++
	}
	return nil, false
}

// escapedStr is str for a string holding escapes, from start.
func (p *jsonCanon) escapedStr(start int) ([]byte, bool) {
	var b []byte
	p.i = start
	for p.i < len(p.src) {
		c := p.src[p.i]
		switch {
		case c == '"':
			p.i++
			return b, true
		case c < 0x20:
			return nil, false
		case c == '\\':
			r, ok := p.escape()
			if !ok {
				return nil, false
			}
			b = utf8.AppendRune(b, r)
		case c < utf8.RuneSelf:
			b = append(b, c)
			p.i++
		default:
			r, n := utf8.DecodeRune(p.src[p.i:])
			b = utf8.AppendRune(b, r) // an invalid byte is utf8.RuneError, written as U+FFFD
			p.i += n
		}
	}
	return nil, false
}

// escape reads the escape at p.i.
func (p *jsonCanon) escape() (rune, bool) {
	if p.i+1 >= len(p.src) {
		return 0, false
	}
	c := p.src[p.i+1]
	p.i += 2
	switch c {
	case '"', '\\', '/':
		return rune(c), true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	case 'u':
		r, ok := p.hex4()
		if !ok {
			return 0, false
		}
		if utf16.IsSurrogate(r) {
			// A pair is one character; a lone half is U+FFFD.
			save := p.i
			if bytes.HasPrefix(p.src[p.i:], []byte(`\u`)) {
				p.i += 2
				if r2, ok := p.hex4(); ok {
					if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
						return pair, true
					}
				}
			}
			p.i = save
			return utf8.RuneError, true
		}
		return r, true
	}
	return 0, false
}

// hex4 reads four hexadecimal digits.
func (p *jsonCanon) hex4() (rune, bool) {
	if p.i+4 > len(p.src) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(p.src[p.i:p.i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(v), true
}

// appendJSONString appends s, valid UTF-8, as a JSON string, escaping
// only what JSON requires.
func appendJSONString(dst, s []byte) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20:
			dst = append(dst, `\u00`...)
			dst = append(dst, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

// canonicalCSVRow returns one CSV row (or the header) in canonical form:
// its fields, unquoted, each with canonicalText, framed. Bytes that are not
// one CSV row are their own canonical form.
func canonicalCSVRow(row []byte) []byte {
	cr := csv.NewReader(bytes.NewReader(skipBOM(row)))
	cr.FieldsPerRecord = -1
	fields, err := cr.Read()
	if err != nil {
		return row
	}
	if _, err := cr.Read(); !errors.Is(err, io.EOF) {
		return row
	}
	return canonicalFields(fields)
}

// canonicalFields is the canonical form of a CSV row read as fields.
func canonicalFields(fields []string) []byte {
	items := make([][]byte, len(fields))
	for i, f := range fields {
		items[i] = []byte(canonicalText(f))
	}
	return frame(items)
}

// maxEntityLen bounds the length of a character reference looked for,
// "&" and ";" included (the longest HTML entity name has 31 letters).
const maxEntityLen = 34

// canonicalText spells every HTML character reference of s one way, so
// that "&amp;", "&#38;" and "&#x26;" are alike, and "&eacute;", "&#233;"
// and "é" too. A reference to a non-ASCII character is decoded: no markup
// or reference is made of one. A reference to an ASCII character is
// written &#<decimal>;, never decoded, since the character could start or
// end a tag ("<", ">", a space after a tag's name) or extend a reference
// next to it. So two texts alike here read alike to a plugin that strips
// tags and then decodes entities, as the shipped ones do. Only references
// ending in ";" are read: a bare "&" stays as it is.
func canonicalText(s string) string {
	i := strings.IndexByte(s, '&')
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for ; i >= 0; i = strings.IndexByte(s, '&') {
		b.WriteString(s[:i])
		s = s[i:]
		decoded, n := characterReference(s)
		if n == 0 {
			b.WriteByte('&')
			s = s[1:]
			continue
		}
		for _, r := range decoded {
			if r < utf8.RuneSelf {
				b.WriteString("&#" + strconv.Itoa(int(r)) + ";")
			} else {
				b.WriteRune(r)
			}
		}
		s = s[n:]
	}
	b.WriteString(s)
	return b.String()
}

// characterReference returns what the reference s starts with stands for
// and its length, or a length of 0 when s does not start with one.
func characterReference(s string) (string, int) {
	end := strings.IndexByte(s[:min(len(s), maxEntityLen)], ';')
	if end < 2 || !referenceName(s[1:end]) {
		return "", 0
	}
	ref := s[:end+1]
	decoded := html.UnescapeString(ref)
	// Not a reference, or a shorter one followed by text ("&notit;" is
	// "&not" and "it;"): left as written.
	if decoded == ref || (decoded != ";" && strings.HasSuffix(decoded, ";")) {
		return "", 0
	}
	return decoded, len(ref)
}

// referenceName reports that name is a named, decimal or hexadecimal
// reference's name: letters and digits, or "#" and digits, or "#x" and
// hexadecimal digits.
func referenceName(name string) bool {
	digits := "0123456789"
	switch {
	case strings.HasPrefix(name, "#x") || strings.HasPrefix(name, "#X"):
		name, digits = name[2:], "0123456789abcdefABCDEF"
	case strings.HasPrefix(name, "#"):
		name = name[1:]
	default:
		if name == "" || !isASCIILetter(name[0]) {
			return false
		}
		digits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	}
	return name != "" && strings.Trim(name, digits) == ""
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
