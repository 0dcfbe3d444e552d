package edge

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rappel-ca/rappel"
)

// maxParams bounds the query parameters of one request, so that checking
// them stays cheap whatever a client sends.
const maxParams = 64

// params is a request's query string, checked against the names its route
// accepts. Parsing records an item for every unknown or repeated name; the
// typed getters record an item for every bad value; err returns them all as
// one 422. A handler reads every parameter it needs, then calls err before
// doing any work:
//
//	p := paramsOf(w)
//	lang := p.enum("lang", rappel.Langs)
//	limit := p.int("limit", 1, 500, 100)
//	if err := p.err(); err != nil {
//		return err
//	}
type params struct {
	list    []param // in query order
	allowed []string
	items   []rappel.Invalid
}

type param struct{ name, value string }

// paramsOf returns the query parameters the router parsed for the route
// of the request w answers.
func paramsOf(w http.ResponseWriter) *params { return &exchangeOf(w).params }

// parseParams parses a raw query string for a route accepting allowed. A
// query that is not well formed (a bad %-escape, a ';' separator, too many
// parameters) is a 400: its parameters cannot be told apart.
func parseParams(raw string, allowed []string) (params, error) {
	p := params{allowed: allowed}
	if raw == "" {
		return p, nil
	}
	for pair := range strings.SplitSeq(raw, "&") {
		if pair == "" {
			continue
		}
		if strings.Contains(pair, ";") {
			return p, rappel.Errorf(rappel.EBADREQUEST,
				"The query string holds a ';': separate parameters with '&', and write a ';' in a value as %%3B.")
		}
		if len(p.list) == maxParams {
			return p, rappel.Errorf(rappel.EBADREQUEST,
				"The query string has more than %d parameters; send fewer.", maxParams)
		}
		k, v, _ := strings.Cut(pair, "=")
		name, err1 := url.QueryUnescape(k)
		value, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			return p, rappel.Errorf(rappel.EBADREQUEST,
				"The query string has a bad %%-escape in %s; write a '%%' as %%25.", quote(pair))
		}
		p.list = append(p.list, param{name, value})
	}
	p.checkNames()
	return p, nil
}

// checkNames records an item for each unknown name and each name given
// more than once, once per name, in query order.
func (p *params) checkNames() {
	for i, q := range p.list {
		if slices.ContainsFunc(p.list[:i], func(o param) bool { return o.name == q.name }) {
			continue // reported at its first occurrence
		}
		if !slices.Contains(p.allowed, q.name) {
			p.add("extra_forbidden", q.name, q.value, p.unknownMsg(q.name), nil)
			continue
		}
		if vs := p.values(q.name); len(vs) > 1 {
			p.add("value_error", q.name, vs, fmt.Sprintf(
				"Query parameter %s was given %d times; give it once.", quote(q.name), len(vs)), nil)
		}
	}
}

func (p *params) unknownMsg(name string) string {
	msg := "Unknown query parameter " + quote(name)
	if len(p.allowed) == 0 {
		return msg + "; this path takes no query parameters."
	}
	if near, ok := rappel.Nearest(name, p.allowed); ok {
		return msg + "; did you mean " + quote(near) + "?"
	}
	return msg + "; this path takes " + quoteList(p.allowed, "and") + "."
}

// values returns every value given for name.
func (p *params) values(name string) []string {
	var vs []string
	for _, q := range p.list {
		if q.name == name {
			vs = append(vs, q.value)
		}
	}
	return vs
}

// add records a validation item for the parameter name.
func (p *params) add(typ, name string, input any, msg string, ctx map[string]any) {
	p.items = append(p.items, rappel.Invalid{
		Type: typ, Loc: []any{"query", name}, Msg: msg, Input: input, Ctx: ctx,
	})
}

// str returns the value of name and whether it was given once. A name given
// several times is reported by parsing and reads as absent here. Reading a
// name the route does not declare is a programming mistake and panics.
func (p *params) str(name string) (string, bool) {
	if !slices.Contains(p.allowed, name) {
		panic("edge: query parameter " + name + " is read but not declared in the route's params")
	}
	v, n := "", 0
	for _, q := range p.list {
		if q.name == name {
			v, n = q.value, n+1
		}
	}
	return v, n == 1
}

// required returns the value of name, recording a "missing" item when it
// was not given.
func (p *params) required(name string) string {
	v, ok := p.str(name)
	if !ok && len(p.values(name)) == 0 {
		p.add("missing", name, nil, "Query parameter "+quote(name)+" is required.", nil)
	}
	return v
}

// enum returns the value of name, or "" when absent, recording an "enum"
// item naming the nearest value when it is not in vocab.
func (p *params) enum(name string, vocab rappel.Vocabulary) string {
	v, ok := p.str(name)
	if !ok || vocab.Has(v) {
		return v
	}
	expected := quoteList(vocab, "or")
	msg := "Query parameter " + quote(name) + " should be " + expected + ", not " + quote(v)
	if near, ok := rappel.Nearest(v, vocab); ok {
		msg += "; did you mean " + quote(near) + "?"
	} else {
		msg += "."
	}
	p.add("enum", name, v, msg, map[string]any{"expected": expected})
	return ""
}

// int returns the value of name as an integer in [lo, hi], or def when
// absent or invalid, recording an item when it is not an integer or out of
// range. hi may be math.MaxInt, for a parameter whose large values the
// handler judges itself (offset above 9500 is a 400, not a 422): a number
// too large for an int then reads as math.MaxInt.
func (p *params) int(name string, lo, hi, def int) int {
	v, ok := p.str(name)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if errors.Is(err, strconv.ErrRange) {
		// Too long for an int, but a number: out of range, not garbage.
		// Atoi has clamped n to math.MaxInt or math.MinInt.
		err = nil
	}
	switch {
	case err != nil:
		p.add("int_parsing", name, v, "Query parameter "+quote(name)+" should be a whole number, not "+quote(v)+".", nil)
	case n < lo:
		p.add("greater_than_equal", name, v, fmt.Sprintf(
			"Query parameter %s should be at least %d, not %s.", quote(name), lo, quote(v)), map[string]any{"ge": lo})
	case n > hi:
		p.add("less_than_equal", name, v, fmt.Sprintf(
			"Query parameter %s should be at most %d, not %s.", quote(name), hi, quote(v)), map[string]any{"le": hi})
	default:
		return n
	}
	return def
}

// date returns the value of name, a YYYY-MM-DD calendar date, or "" when
// absent, recording an item when it is not one.
func (p *params) date(name string) string {
	v, ok := p.str(name)
	if !ok || rappel.ValidDate(v) {
		return v
	}
	why := "it is not written YYYY-MM-DD"
	if dateShaped(v) {
		why = "there is no such day"
	}
	p.add("date_from_datetime_parsing", name, v,
		"Query parameter "+quote(name)+" should be a date written YYYY-MM-DD, not "+quote(v)+": "+why+".",
		map[string]any{"error": why})
	return ""
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

// oneOf returns the name under which a parameter known by several names
// (a canonical name and its aliases) was given, or names[0] when none was.
// Giving more than one of them is a value_error at the second name given:
// they would set the same thing twice.
func (p *params) oneOf(names ...string) string {
	given := ""
	for _, q := range p.list {
		if !slices.Contains(names, q.name) || q.name == given {
			continue
		}
		if given == "" {
			given = q.name
			continue
		}
		p.add("value_error", q.name, q.value, fmt.Sprintf(
			"Query parameters %s and %s name the same filter; give only one of them (%s is the usual name).",
			quote(given), quote(q.name), quote(names[0])), nil)
		return ""
	}
	if given == "" {
		return names[0]
	}
	return given
}

// invalid records an item built elsewhere, such as a q's parse error.
func (p *params) invalid(it rappel.Invalid) { p.items = append(p.items, it) }

// err returns one 422 holding every item recorded so far, or nil.
func (p *params) err() error {
	if len(p.items) == 0 {
		return nil
	}
	return rappel.Invalids(p.items...)
}

// quoteList writes values the way pydantic's enum messages do:
// 'a', 'b' or 'c'.
func quoteList(values []string, conj string) string {
	var b strings.Builder
	for i, v := range values {
		switch {
		case i == 0:
		case i == len(values)-1:
			b.WriteString(" " + conj + " ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(quote(v))
	}
	return b.String()
}
