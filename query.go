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
type Term struct {
	Text   string
	Phrase bool
}

// Limits of a q.
const (
	MaxQueryBytes = 512
	MaxQueryTerms = 32
)

// QueryError says what is wrong with a q, in a sentence, with the pydantic
// type of the matching 422 item.
type QueryError struct {
	Type string // value_error or string_too_long
	Msg  string
}

func (e *QueryError) Error() string { return e.Msg }

// Item returns the 422 item for the error, at loc (for example
// ["query", "q"] or ["body", "q"]), echoing input.
func (e *QueryError) Item(input string, loc ...any) Invalid {
	it := Invalid{Type: e.Type, Loc: loc, Msg: e.Msg, Input: input}
	if e.Type == "string_too_long" {
		it.Ctx = map[string]any{"max_length": MaxQueryBytes}
	}
	return it
}

// ParseQuery reads the q language: words separated by spaces are AND-ed;
// OR (upper case) between two words or phrases matches either; "..." is an
// exact phrase; a leading - excludes a word or phrase. A lone "-" is
// ignored. It returns nil for a q of only spaces, and a *QueryError for an
// unclosed quote, a misplaced OR, an excluded term inside an OR, a control
// character, more than MaxQueryTerms terms or more than MaxQueryBytes bytes.
func ParseQuery(q string) (*Query, error) {
	if len(q) > MaxQueryBytes {
		return nil, &QueryError{"string_too_long", fmt.Sprintf("q is %d bytes long; keep it to %d bytes or fewer.", len(q), MaxQueryBytes)}
	}
	if !utf8.ValidString(q) {
		return nil, &QueryError{"value_error", "q is not valid UTF-8 text; send it percent-encoded as UTF-8."}
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
			return nil, &QueryError{"value_error", fmt.Sprintf("q holds a control character (U+%04X) at byte %d; remove it.", r, pos)}
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
				return nil, &QueryError{"value_error", fmt.Sprintf("q has an unclosed double quote at byte %d; add the closing quote or remove it.", pos)}
			}
			text := q[pos+1 : pos+1+end]
			pos += end + 2
			if strings.TrimSpace(text) == "" {
				continue
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
		items = append(items, queryItem{term: Term{Text: word}, exclude: exclude})
	}
	return items, nil
}

const orUsage = `OR must stand between two words or phrases, as in "listeria OR salmonella".`

func groupQuery(items []queryItem) (*Query, error) {
	if len(items) == 0 {
		return nil, nil
	}
	var q Query
	terms := 0
	for i := 0; i < len(items); i++ {
		it := items[i]
		if it.or {
			return nil, &QueryError{"value_error", "q starts a clause with OR; " + orUsage}
		}
		c := Clause{Terms: []Term{it.term}, Exclude: it.exclude}
		for i+1 < len(items) && items[i+1].or {
			if i+2 >= len(items) || items[i+2].or {
				return nil, &QueryError{"value_error", "q ends with OR or repeats it; " + orUsage}
			}
			next := items[i+2]
			if c.Exclude || next.exclude {
				return nil, &QueryError{"value_error", `q combines an excluded term with OR; exclude each term on its own, as in "recall -peanut -milk".`}
			}
			c.Terms = append(c.Terms, next.term)
			i += 2
		}
		terms += len(c.Terms)
		q.Clauses = append(q.Clauses, c)
	}
	if terms > MaxQueryTerms {
		return nil, &QueryError{"value_error", fmt.Sprintf("q has %d terms; use at most %d.", terms, MaxQueryTerms)}
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
			if t.Phrase {
				b.WriteString(`"` + t.Text + `"`)
			} else {
				b.WriteString(t.Text)
			}
		}
	}
	return b.String()
}
