package edge

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

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
			return p, rappel.BadRequest("the query string holds a ';'",
				"separate parameters with '&', and write a ';' in a value as '%3B'")
		}
		if len(p.list) == maxParams {
			return p, rappel.BadRequest(fmt.Sprintf("the query string has more than %d parameters", maxParams), "send fewer")
		}
		k, v, _ := strings.Cut(pair, "=")
		name, err1 := url.QueryUnescape(k)
		value, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			return p, rappel.BadRequest("the query string has a bad %-escape in "+rappel.Quote(pair), "write a '%' as '%25'")
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
			p.invalid(rappel.InvalidExtra(rappel.QueryLoc(q.name), q.value, p.allowed))
			continue
		}
		if vs := p.values(q.name); len(vs) > 1 {
			p.invalid(rappel.InvalidRepeated(rappel.QueryLoc(q.name), vs))
		}
	}
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

// required returns the value of name, recording a "missing" item, which
// says what to send (wanted), when it was not given.
func (p *params) required(name string) string {
	v, ok := p.str(name)
	if !ok && len(p.values(name)) == 0 {
		fix := "add it to the query string"
		if w, ok := wanted[name]; ok {
			fix = "send " + w
		}
		p.invalid(rappel.InvalidMissing(rappel.QueryLoc(name), fix))
	}
	return v
}

// wanted says what the required query parameters hold, for the message of
// a missing one.
var wanted = map[string]string{
	"upc":   "the barcode printed under the bars, as in 'upc=0 62639 31285 4'",
	"vin":   "the vehicle's 17-character VIN, as in 'vin=1HGCM82633A004352'",
	"id":    "the recall_id of a recall, as GET /recall lists them",
	"token": "the token of the e-mailed link, copied whole",
}

// enum returns the value of name, or "" when absent, recording an "enum"
// item naming the nearest value when it is not in vocab.
func (p *params) enum(name string, vocab rappel.Vocabulary) string {
	v, ok := p.str(name)
	if !ok || vocab.Has(v) {
		return v
	}
	p.invalid(rappel.InvalidEnum(rappel.QueryLoc(name), v, vocab))
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
		p.invalid(rappel.InvalidInt(rappel.QueryLoc(name), v))
	case n < lo:
		p.invalid(rappel.InvalidMin(rappel.QueryLoc(name), v, lo))
	case n > hi:
		p.invalid(rappel.InvalidMax(rappel.QueryLoc(name), v, hi))
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
	p.invalid(rappel.InvalidDate(rappel.QueryLoc(name), v))
	return ""
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
		p.invalid(rappel.InvalidValue(rappel.QueryLoc(q.name), q.value, rappel.Reason{
			Problem: "sets the same filter as " + rappel.Quote(given),
			Fix:     "give only one of them (" + rappel.Quote(names[0]) + " is the usual name)"}))
		return ""
	}
	if given == "" {
		return names[0]
	}
	return given
}

// invalid records an item, built by one of rappel's Invalid constructors.
func (p *params) invalid(it rappel.Invalid) { p.items = append(p.items, it) }

// err returns one 422 holding every item recorded so far, or nil.
func (p *params) err() error {
	if len(p.items) == 0 {
		return nil
	}
	return rappel.Invalids(p.items...)
}
