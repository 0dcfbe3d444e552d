package rappel

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Query is a parsed q: its clauses must all match (AND). A query whose
// clauses are all exclusions matches every record but those.
type Query struct {
	Clauses []Clause
}

// Clause is one AND-ed part of a query: any of its terms (OR), or, when
// Exclude is set, none of them. An excluded clause has exactly one term.
type Clause struct {
	Terms   []Term
	Exclude bool
}

// Term is a word or, when Phrase is set, the words of a double-quoted exact
// phrase. Text is as the client wrote it; the index analyses it (case and
// accent folding, stemming), and a word that splits into several tokens, such
// as "F-150", is matched as a phrase.
//
// Prefix marks a word typed with a trailing * (or the last word of a q
// searched with prefix=last): it also matches the words it begins, as
// search-as-you-type does. Text is then the word without the *.
type Term struct {
	Text   string
	Phrase bool
	Prefix bool
}

// MinPrefix is how many letters or digits a prefix needs before its *:
// fewer would match a good part of the dictionary.
const MinPrefix = 2

// Limits of a q.
const (
	MaxQueryBytes = 512
	MaxQueryTerms = 32
)

// QueryError says what is wrong with a q, as a Reason about q. TooLong
// marks a q over MaxQueryBytes, a string_too_long item rather than a
// value_error.
type QueryError struct {
	Reason
	TooLong bool
}

func (e *QueryError) Error() string { return "q " + e.Reason.String() }

// Item returns the 422 item for the error at loc (QueryLoc("q") or
// BodyLoc("q")), echoing input.
func (e *QueryError) Item(loc []any, input string) Invalid {
	if e.TooLong {
		return InvalidTooLong(loc, input, len(input), MaxQueryBytes)
	}
	return InvalidValue(loc, input, e.Reason)
}

// queryError returns a *QueryError of problem and fix.
func queryError(problem, fix string) *QueryError {
	return &QueryError{Reason: Reason{Problem: problem, Fix: fix}}
}

// ParseQuery reads the q language: words separated by spaces are AND-ed;
// OR (upper case) between two words or phrases matches either; "..." is an
// exact phrase; a leading - excludes a word or phrase. A lone "-" is
// ignored. It returns nil for a q of only spaces, and a *QueryError for an
// unclosed quote, a misplaced OR, an excluded term inside an OR, a control
// character, more than MaxQueryTerms terms or more than MaxQueryBytes bytes.
func ParseQuery(q string) (*Query, error) {
	if len(q) > MaxQueryBytes {
		return nil, &QueryError{TooLong: true, Reason: Reason{
			Problem: fmt.Sprintf("is %d bytes long", len(q)), Fix: fmt.Sprintf("keep it to %d bytes or fewer", MaxQueryBytes)}}
	}
	if !utf8.ValidString(q) {
		return nil, queryError("is not valid UTF-8 text", "send it percent-encoded as UTF-8")
	}
	items, err := scanQuery(q)
	if err != nil {
		return nil, err
	}
	return groupQuery(items)
}

// queryItem is a word, a phrase or the OR operator, as scanned.
type queryItem struct {
	term    Term
	exclude bool
	or      bool
}

func scanQuery(q string) ([]queryItem, error) {
	var items []queryItem
	pos := 0
	for pos < len(q) {
		r, size := utf8.DecodeRuneInString(q[pos:])
		switch {
		case r == '\t' || r == '\n' || r == '\r' || unicode.IsSpace(r):
			pos += size
			continue
		case unicode.IsControl(r) || r == 0:
			return nil, queryError(fmt.Sprintf("holds a control character (U+%04X) at byte %d", r, pos), "remove it")
		}
		exclude := false
		if r == '-' {
			exclude = true
			pos++
			if next, _ := utf8.DecodeRuneInString(q[pos:]); pos == len(q) || unicode.IsSpace(next) || unicode.IsControl(next) {
				continue // a lone "-" is punctuation, not an operator
			}
		}
		if pos < len(q) && q[pos] == '"' {
			end := strings.IndexByte(q[pos+1:], '"')
			if end < 0 {
				return nil, queryError(fmt.Sprintf("has an unclosed double quote at byte %d", pos), "add the closing quote or remove it")
			}
			text := q[pos+1 : pos+1+end]
			pos += end + 2
			if strings.TrimSpace(text) == "" {
				continue
			}
			if strings.Contains(text, "*") {
				return nil, queryError(fmt.Sprintf("has a * inside the quoted phrase %s", Quote(`"`+text+`"`)),
					"remove the * (a phrase is matched word for word) or the quotes (to search its words, the last as a prefix)")
			}
			items = append(items, queryItem{term: Term{Text: text, Phrase: true}, exclude: exclude})
			continue
		}
		end := pos
		for end < len(q) {
			r, size := utf8.DecodeRuneInString(q[end:])
			if unicode.IsSpace(r) || r == '"' || unicode.IsControl(r) {
				break
			}
			end += size
		}
		word := q[pos:end]
		pos = end
		if word == "" {
			continue
		}
		if word == "OR" && !exclude {
			items = append(items, queryItem{or: true})
			continue
		}
		t := Term{Text: word}
		if strings.Contains(word, "*") {
			var err error
			if t, err = prefixTerm(word); err != nil {
				return nil, err
			}
		}
		items = append(items, queryItem{term: t, exclude: exclude})
	}
	return items, nil
}

// prefixTerm reads a word holding a *: a prefix when the * ends it and
// follows at least MinPrefix letters or digits.
func prefixTerm(word string) (Term, error) {
	stem, ok := strings.CutSuffix(word, "*")
	if strings.Contains(stem, "*") || !ok {
		return Term{}, queryError(fmt.Sprintf("has a * inside the word %s", Quote(word)),
			"put * only at the end of a word, as in 'listeri*'")
	}
	n := 0
	for _, r := range stem {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			n++
		}
	}
	if n < MinPrefix {
		return Term{}, queryError(fmt.Sprintf("has the wildcard %s, with fewer than %d letters before the *", Quote(word), MinPrefix),
			fmt.Sprintf("type at least %d letters before the *, as in 'li*'", MinPrefix))
	}
	return Term{Text: stem, Prefix: true}, nil
}

const orUsage = "put OR between two words or phrases, as in 'listeria OR salmonella'"

func groupQuery(items []queryItem) (*Query, error) {
	if len(items) == 0 {
		return nil, nil
	}
	var q Query
	terms := 0
	for i := 0; i < len(items); i++ {
		it := items[i]
		if it.or {
			return nil, queryError("starts a clause with OR", orUsage)
		}
		c := Clause{Terms: []Term{it.term}, Exclude: it.exclude}
		for i+1 < len(items) && items[i+1].or {
			if i+2 >= len(items) || items[i+2].or {
				return nil, queryError("ends with OR or repeats it", orUsage)
			}
			next := items[i+2]
			if c.Exclude || next.exclude {
				return nil, queryError("combines an excluded term with OR", "exclude each term on its own, as in 'recall -peanut -milk'")
			}
			c.Terms = append(c.Terms, next.term)
			i += 2
		}
		terms += len(c.Terms)
		q.Clauses = append(q.Clauses, c)
	}
	if terms > MaxQueryTerms {
		return nil, queryError(fmt.Sprintf("has %d terms", terms), fmt.Sprintf("use at most %d", MaxQueryTerms))
	}
	return &q, nil
}

// String writes the query back in the q language, normalized: one space
// between items. Parsing it again gives the same query.
func (q *Query) String() string {
	if q == nil {
		return ""
	}
	var b strings.Builder
	for i, c := range q.Clauses {
		if i > 0 {
			b.WriteByte(' ')
		}
		for j, t := range c.Terms {
			if j > 0 {
				b.WriteString(" OR ")
			}
			if c.Exclude {
				b.WriteByte('-')
			}
			switch {
			case t.Phrase:
				b.WriteString(`"` + t.Text + `"`)
			case t.Prefix:
				b.WriteString(t.Text + "*")
			default:
				b.WriteString(t.Text)
			}
		}
	}
	return b.String()
}
