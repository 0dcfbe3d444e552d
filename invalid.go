package rappel

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Client-facing validation is worded here, and only here: every 422 item
// and every 400 sentence is built by a function of this file, so that they
// all read alike. A message names what it is about (Subject), says what is
// wrong, then how to fix it, and shows every value, name and suggestion the
// same way (Quote). The edge decides where in a request a problem is (the
// loc); the other packages return the domain errors below, which carry no
// location.

// MaxEcho bounds what a message or an item repeats of a client's input, so
// that a long value cannot make an error response large.
const MaxEcho = 100

// Clip shortens s to at most MaxEcho bytes, on a rune boundary, marking the
// cut with an ellipsis. Invalid UTF-8 becomes U+FFFD first, as JSON would
// write it: what a message shows is what the client reads, and clipping
// again changes nothing.
func Clip(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= MaxEcho {
		return s
	}
	i := MaxEcho
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// Quote is how every message shows a value, a name or a suggestion:
// clipped, in single quotes.
func Quote(s string) string { return "'" + Clip(s) + "'" }

// QuoteList quotes values and joins them as a sentence does, with conj
// ("and", "or") before the last: 'a', 'b' or 'c'.
func QuoteList(values []string, conj string) string {
	var b strings.Builder
	for i, v := range values {
		switch {
		case i == 0:
		case i == len(values)-1:
			b.WriteString(" " + conj + " ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(Quote(v))
	}
	return b.String()
}

// Invalids returns a 422 *Error holding items, each built by one of the
// Invalid constructors below.
func Invalids(items ...Invalid) *Error {
	return &Error{Code: EINVALID, Items: items}
}

// Suggest returns the candidate to suggest for s, "" when none is near
// enough (see Nearest).
func Suggest(s string, candidates []string) string {
	if near, ok := Nearest(s, candidates); ok {
		return near
	}
	return ""
}

// Types of 422 items, named as pydantic v2 names them. They are the closed
// list ItemTypes: each constructor below sets one.
const (
	ItemMissing  = "missing"
	ItemExtra    = "extra_forbidden"
	ItemEnum     = "enum"
	ItemInt      = "int_parsing"
	ItemTooSmall = "greater_than_equal"
	ItemTooLarge = "less_than_equal"
	ItemDate     = "date_from_datetime_parsing"
	ItemTooLong  = "string_too_long"
	ItemJSON     = "json_invalid"
	ItemValue    = "value_error"
)

// ItemTypes lists every type a 422 item may have.
var ItemTypes = Vocabulary{ItemMissing, ItemExtra, ItemEnum, ItemInt, ItemTooSmall, ItemTooLarge, ItemDate, ItemTooLong, ItemJSON, ItemValue}

// The parts of a request an item's loc starts with.
const (
	InQuery = "query"
	InPath  = "path"
	InBody  = "body"
	// InHeader starts the loc of a request header, such as
	// Idempotency-Key.
	InHeader = "header"
)

// HeaderLoc is the loc of the request header name.
func HeaderLoc(name string) []any { return []any{InHeader, name} }

// QueryLoc is the loc of the query parameter name.
func QueryLoc(name string) []any { return []any{InQuery, Clip(name)} }

// PathLoc is the loc of the path parameter name.
func PathLoc(name string) []any { return []any{InPath, Clip(name)} }

// BodyLoc is the loc of a field of the body, or of the whole body when
// field is "".
func BodyLoc(field string) []any {
	if field == "" {
		return []any{InBody}
	}
	return []any{InBody, Clip(field)}
}

// Subject names what loc points at, as a message starts: "Query parameter
// 'lang'", "Path parameter 'record_id'", "Body field 'email'", "The body".
func Subject(loc []any) string {
	if len(loc) == 0 {
		return "The request"
	}
	parts := make([]string, len(loc)-1)
	for i, p := range loc[1:] {
		parts[i] = fmt.Sprint(p)
	}
	name := Quote(strings.Join(parts, "."))
	switch {
	case loc[0] == InBody && len(loc) == 1:
		return "The body"
	case loc[0] == InBody:
		return "Body field " + name
	case loc[0] == InQuery:
		return "Query parameter " + name
	case loc[0] == InPath:
		return "Path parameter " + name
	}
	return "Input " + name
}

// Reason says why a value was refused, in the parts a message is made of.
// Problem is a predicate on the value, read after the subject ("is empty",
// "has an unclosed double quote at byte 3"); Fix says what to do instead,
// starting with a verb ("add the closing quote or remove it"), "" when the
// problem says it already; Suggestion is the nearest valid value, "" when
// none is near; Ctx holds facts for the item's ctx (the right check
// digit). Parsers of client input return their errors as Reasons, without
// knowing where in a request the value came from.
type Reason struct {
	Problem, Fix, Suggestion string
	Ctx                      map[string]any
}

// sentence writes the reason about subject: "<subject> <problem>; <fix>",
// then "; did you mean '<suggestion>'?" or a period.
func (r Reason) sentence(subject string) string {
	var b strings.Builder
	b.WriteString(subject)
	if r.Problem != "" {
		b.WriteString(" " + r.Problem)
	}
	if r.Fix != "" {
		b.WriteString("; " + r.Fix)
	}
	if r.Suggestion != "" {
		b.WriteString("; did you mean " + Quote(r.Suggestion) + "?")
	} else {
		b.WriteString(".")
	}
	return b.String()
}

// String is the reason as a clause without its subject, for errors
// outside a request: "is empty; give a period".
func (r Reason) String() string {
	return strings.TrimSuffix(strings.TrimPrefix(r.sentence(""), " "), ".")
}

// item builds an item at loc, clipping a string input (or each of a list's).
func item(typ string, loc []any, input any, msg string, ctx map[string]any) Invalid {
	switch v := input.(type) {
	case string:
		input = Clip(v)
	case []string:
		clipped := make([]string, len(v))
		for i, s := range v {
			clipped[i] = Clip(s)
		}
		input = clipped
	}
	return Invalid{Type: typ, Loc: loc, Msg: msg, Input: input, Ctx: ctx}
}

// withReason returns ctx holding the reason's suggestion and facts, if
// any.
func withReason(ctx map[string]any, r Reason) map[string]any {
	if r.Suggestion == "" && len(r.Ctx) == 0 {
		return ctx
	}
	if ctx == nil {
		ctx = make(map[string]any, len(r.Ctx)+1)
	}
	for k, v := range r.Ctx {
		ctx[k] = v
	}
	if r.Suggestion != "" {
		ctx["suggestion"] = r.Suggestion
	}
	return ctx
}

// InvalidMissing is the item of a required parameter or field that was not
// given; fix says what to send ("send the e-mail address to alert").
func InvalidMissing(loc []any, fix string) Invalid {
	return item(ItemMissing, loc, nil, Reason{Problem: "is required", Fix: fix}.sentence(Subject(loc)), nil)
}

// InvalidExtra is the item of a parameter or field that is not one of
// allowed: it names the nearest allowed name, or lists them all.
func InvalidExtra(loc []any, input any, allowed []string) Invalid {
	name := fmt.Sprint(loc[len(loc)-1])
	r := Reason{Problem: "is unknown", Suggestion: Suggest(name, allowed)}
	switch {
	case len(allowed) == 0 && loc[0] == InQuery:
		r.Fix = "remove it, as this path takes no query parameters"
	case len(allowed) == 0:
		r.Fix = "remove it"
	case r.Suggestion == "":
		r.Fix = "use " + QuoteList(allowed, "or")
	}
	return item(ItemExtra, loc, input, r.sentence(Subject(loc)), nil)
}

// InvalidRepeated is the item of a parameter given more than once.
func InvalidRepeated(loc []any, values []string) Invalid {
	r := Reason{Problem: fmt.Sprintf("was given %d times", len(values)), Fix: "give it once"}
	return item(ItemValue, loc, values, r.sentence(Subject(loc)), nil)
}

// InvalidEnum is the item of a value outside the closed list allowed. The
// message lists allowed and names the nearest value; ctx holds both.
func InvalidEnum(loc []any, input string, allowed []string) Invalid {
	return InvalidEnumOf(loc, input, allowed, "", "")
}

// InvalidEnumOf is InvalidEnum for a list too long to spell out in the
// message: what describes it instead ("a field to group by"). fix, when
// set, replaces the suggestion, for a value that is a known mistake (a
// number where a field to group by is expected). Without a near value or a
// fix, the message lists allowed; a list of one value always suggests it.
func InvalidEnumOf(loc []any, input string, allowed []string, what, fix string) Invalid {
	list := QuoteList(allowed, "or")
	r := Reason{Fix: fix}
	if what == "" {
		what = list
	}
	r.Problem = "should be " + what + ", not " + Quote(input)
	if fix == "" {
		r.Suggestion = Suggest(input, allowed)
		switch {
		case r.Suggestion == "" && len(allowed) == 1:
			r.Suggestion = allowed[0]
		case r.Suggestion == "" && what != list:
			r.Fix = "use " + list
		}
	}
	ctx := withReason(map[string]any{"expected": list}, r)
	return item(ItemEnum, loc, input, r.sentence(Subject(loc)), ctx)
}

// InvalidInt is the item of a value that is not a whole number.
func InvalidInt(loc []any, input string) Invalid {
	r := Reason{Problem: "should be a whole number, not " + Quote(input)}
	return item(ItemInt, loc, input, r.sentence(Subject(loc)), nil)
}

// InvalidMin is the item of a number below min.
func InvalidMin(loc []any, input string, min int) Invalid {
	r := Reason{Problem: fmt.Sprintf("should be at least %d, not %s", min, Quote(input))}
	return item(ItemTooSmall, loc, input, r.sentence(Subject(loc)), map[string]any{"ge": min})
}

// InvalidMax is the item of a number above max.
func InvalidMax(loc []any, input string, max int) Invalid {
	r := Reason{Problem: fmt.Sprintf("should be at most %d, not %s", max, Quote(input))}
	return item(ItemTooLarge, loc, input, r.sentence(Subject(loc)), map[string]any{"le": max})
}

// InvalidDate is the item of a value that is not a YYYY-MM-DD calendar
// date, saying whether it is not written so or names no day.
func InvalidDate(loc []any, input string) Invalid {
	why := "it is not written YYYY-MM-DD"
	if dateShaped(input) {
		why = "there is no such day"
	}
	r := Reason{Problem: "should be a date written YYYY-MM-DD, not " + Quote(input) + ": " + why}
	return item(ItemDate, loc, input, r.sentence(Subject(loc)), map[string]any{"error": why})
}

// dateShaped reports whether s is written dddd-dd-dd.
func dateShaped(s string) bool {
	if len(s) != len(time.DateOnly) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if i == 4 || i == 7 {
			if s[i] != '-' {
				return false
			}
		} else if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// InvalidTooLong is the item of a text longer than max bytes. size is its
// length in bytes, or -1 when only "longer than max" is known (a body read
// no further than that); input is echoed, clipped, when not "".
func InvalidTooLong(loc []any, input string, size, max int) Invalid {
	r := Reason{Problem: fmt.Sprintf("is %d bytes long", size), Fix: fmt.Sprintf("keep it to %d bytes or fewer", max)}
	if size < 0 {
		r.Problem = fmt.Sprintf("is longer than %d bytes", max)
	}
	var in any
	if input != "" {
		in = input
	}
	return item(ItemTooLong, loc, in, r.sentence(Subject(loc)), map[string]any{"max_length": max})
}

// InvalidJSON is the item of a body that is not the JSON it should be.
func InvalidJSON(loc []any, r Reason) Invalid {
	return item(ItemJSON, loc, nil, r.sentence(Subject(loc)), nil)
}

// InvalidValue is the item of a value refused for r: a parser's reason (a
// q, a period, a barcode, a VIN) or a check across values (a date range).
// input is echoed, clipped.
func InvalidValue(loc []any, input any, r Reason) Invalid {
	return item(ItemValue, loc, input, r.sentence(Subject(loc)), withReason(nil, r))
}

// UnknownError says that a value matches nothing the data holds, such as
// a category no recall has. It names the field, not a place in a request:
// the edge turns it into an item at the field's place (Reason). Nearest is
// the closest value that would match, "" when none is close; Fix says what
// to do when nothing is near.
type UnknownError struct {
	Field, Value, Nearest, Fix string
}

func (e *UnknownError) Error() string {
	return "unknown " + e.Field + " " + Quote(e.Value)
}

// Reason words the error for an item at the field's place in a request.
func (e *UnknownError) Reason() Reason {
	r := Reason{Problem: "is " + Quote(e.Value) + ", an unknown " + e.Field, Suggestion: e.Nearest}
	if e.Nearest == "" {
		r.Fix = e.Fix
	}
	return r
}

// Unknown returns the 422 *Error of a value of field that matches nothing;
// its cause is the *UnknownError the edge places in the request.
func Unknown(field, value, nearest, fix string) *Error {
	ue := &UnknownError{Field: field, Value: value, Nearest: nearest, Fix: fix}
	r := ue.Reason()
	r.Problem = ""
	return &Error{Code: EINVALID, Message: r.sentence("Unknown " + field + " " + Quote(value)), Err: ue}
}

// BadRequest returns a 400 whose message is problem, capitalized, then
// fix: what the client sent that cannot be served as asked, and what to
// send instead. Values in either are written with Quote.
func BadRequest(problem, fix string) *Error {
	r, size := utf8.DecodeRuneInString(problem)
	msg := string(unicode.ToUpper(r)) + problem[size:] + "; " + fix + "."
	return &Error{Code: EBADREQUEST, Message: msg}
}

// BadIdempotencyKey is the 400 of a malformed Idempotency-Key: the header
// problem (what is wrong with it), fix how to send it.
func BadIdempotencyKey(problem, fix string) *Error {
	return BadRequest("the Idempotency-Key header "+problem, fix)
}

// InvalidIdempotencyReuse is the 422 item of an Idempotency-Key sent
// before with another request (another method, path, query or body): a
// key names one request.
func InvalidIdempotencyReuse(loc []any) Invalid {
	return item(ItemValue, loc, nil,
		"This Idempotency-Key was used in the last 24 hours for a different request (another body, path or method); "+
			"send a new key for a new request, or the first request unchanged to get its answer again.", nil)
}

// BadCursor is the 400 of a cursor that cannot continue the search; why
// says what is wrong with it ("is not one this API issued").
func BadCursor(why string) *Error {
	return BadRequest("query parameter 'cursor' "+why,
		"pass back the next_cursor of the previous page unchanged, with the same q, filters and sort, or drop cursor to start again")
}

// UnsupportedMediaType returns the 415 of a request body sent with the
// Content-Type contentType to an endpoint that reads only JSON.
func UnsupportedMediaType(contentType string) *Error {
	return &Error{Code: EMEDIATYPE, Message: "The body is sent as " + Quote(contentType) +
		", which this endpoint does not read; send it as JSON, with the header 'Content-Type: application/json'."}
}

// HeadersTooLarge returns the 431 of a request whose request line and
// headers take size bytes, over limit; part names the longest of them
// ("query parameter 'since'", "header 'Cookie'"), of partSize bytes.
func HeadersTooLarge(size, limit int, part string, partSize int) *Error {
	return &Error{Code: EHEADERS, Message: fmt.Sprintf("The request line and headers take %d bytes, over this API's limit of %d bytes; "+
		"the longest part is %s, of %d bytes: send it shorter.", size, limit, part, partSize)}
}

// BadChar returns the reason to refuse the first character of v that text
// sent by a client must not hold: a byte that is not UTF-8, a control
// character, or a line or paragraph separator, any of which could reach a
// mail header. With strict, as for an e-mail address, it refuses as well
// the invisible format characters (Unicode category Cf: bidi controls such
// as U+202E, zero-width characters, U+2060, U+FEFF), which make an address
// look like another, and U+FFFD, which JSON decoding puts in place of a
// lone surrogate or of bytes that are not UTF-8. The reason says which
// character, at which byte, and how to fix it.
func BadChar(v string, strict bool) (Reason, bool) {
	for i, r := range v {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(v[i:], "\uFFFD"):
			return notUTF8(v[i], i), true
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029:
			return Reason{Problem: fmt.Sprintf("holds a control character (U+%04X) at byte %d", r, i), Fix: "remove it"}, true
		case !strict:
		case r == utf8.RuneError:
			return Reason{Problem: fmt.Sprintf("holds U+FFFD, the replacement character, at byte %d: the text sent had a lone surrogate (such as \\ud800) or bytes that are not UTF-8 there", i),
				Fix: "send the address as UTF-8 text, with whole surrogate pairs in JSON escapes"}, true
		case unicode.Is(unicode.Cf, r):
			name := formatNames[r]
			if name == "" {
				name = "an invisible format character"
			} else {
				name += ", an invisible format character"
			}
			return Reason{Problem: fmt.Sprintf("holds U+%04X (%s) at byte %d", r, name, i),
				Fix: "remove it: type the address again rather than pasting it"}, true
		}
	}
	return Reason{}, false
}

// notUTF8 is the reason to refuse text holding the byte b, not UTF-8, at
// byte at of the value.
func notUTF8(b byte, at int) Reason {
	return Reason{Problem: fmt.Sprintf("holds the byte 0x%02X at byte %d, which is not UTF-8 text", b, at),
		Fix: "send the text encoded as UTF-8"}
}

// BadJSONText returns the reason to refuse a JSON value, raw as a request
// body holds it (a string, or an array of strings), whose strings hold
// what decoding would quietly turn into U+FFFD: a byte that is not UTF-8,
// or a \u escape of half a UTF-16 surrogate pair without its other half.
// The reason names the byte or the escape and its byte in the decoded
// string. A U+FFFD sent as such, or escaped, is text and passes.
func BadJSONText(raw []byte) (Reason, bool) {
	start := -1 // the opening quote of the string being read; -1 between strings
	for i := 0; i < len(raw); {
		switch c := raw[i]; {
		case start < 0:
			if c == '"' {
				start = i
			}
			i++
		case c == '"':
			start = -1
			i++
		case c == '\\':
			n, lone := jsonEscape(raw[i:])
			if lone {
				return Reason{Problem: fmt.Sprintf("holds the escape %s at byte %d, half of a surrogate pair without its other half",
					Quote(string(raw[i:i+6])), decodedLen(raw[start:i])),
					Fix: "send the character as UTF-8, or escape it with both halves of its pair, such as '\\ud83d\\ude00'"}, true
			}
			i += n
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && size == 1 {
				return notUTF8(c, decodedLen(raw[start:i])), true
			}
			i += size
		}
	}
	return Reason{}, false
}

// jsonEscape reads the escape at the start of esc: its length, and whether
// it is a \u escape of half a surrogate pair without the other half
// right after it (a high half, then a low one).
func jsonEscape(esc []byte) (n int, lone bool) {
	u, ok := hex4(esc)
	switch {
	case !ok && len(esc) > 1 && esc[1] < utf8.RuneSelf:
		return 2, false
	case !ok:
		return 1, false // the byte after the backslash is read as any other
	case u >= 0xDC00 && u <= 0xDFFF:
		return 6, true
	case u >= 0xD800 && u <= 0xDBFF:
		if low, ok := hex4(esc[6:]); ok && low >= 0xDC00 && low <= 0xDFFF {
			return 12, false
		}
		return 6, true
	}
	return 6, false
}

// hex4 reads the code unit of a \uXXXX escape at the start of b.
func hex4(b []byte) (uint16, bool) {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return 0, false
	}
	var u uint16
	for _, c := range b[2:6] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		u = u<<4 | uint16(c)
	}
	return u, true
}

// decodedLen is how many bytes the JSON string text prefix, from its
// opening quote, decodes to: the place in the value that a message names.
func decodedLen(prefix []byte) int {
	var s string
	if err := json.Unmarshal(append(slices.Clip(prefix), '"'), &s); err != nil {
		return len(prefix) - 1
	}
	return len(s)
}

// formatNames names the format characters most often met in pasted text.
var formatNames = map[rune]string{
	0x00AD: "soft hyphen", 0x061C: "Arabic letter mark",
	0x200B: "zero-width space", 0x200C: "zero-width non-joiner", 0x200D: "zero-width joiner",
	0x200E: "left-to-right mark", 0x200F: "right-to-left mark",
	0x202A: "left-to-right embedding", 0x202B: "right-to-left embedding", 0x202C: "pop directional formatting",
	0x202D: "left-to-right override", 0x202E: "right-to-left override",
	0x2060: "word joiner", 0x2066: "left-to-right isolate", 0x2067: "right-to-left isolate",
	0x2068: "first strong isolate", 0x2069: "pop directional isolate", 0xFEFF: "zero-width no-break space, or byte order mark",
}

// QueryTimeout is the client's 504 for a search that ran past its time
// budget, err (if any) the cause kept for the log: the searcher and the
// edge both answer with it.
func QueryTimeout(err error) *Error {
	return &Error{Code: ETIMEOUT, Message: "The query took longer than its time budget; narrow it with a date range (issued_after, issued_before), a filter or more specific words.", Err: err}
}
