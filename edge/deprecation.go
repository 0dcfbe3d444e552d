package edge

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rappel-ca/rappel"
)

// The OpenAPI document is the one place a route or a query parameter is
// marked deprecated (docs/api.md, "Versioning and deprecation"): with
// "deprecated": true and these three extensions, which the edge reads at
// start to set the Deprecation (RFC 9745), Sunset (RFC 8594) and Link
// headers of the requests that use it. oasdiff reads x-sunset too: it
// lets a route or parameter go once its sunset has passed.
const (
	extDeprecationDate   = "x-deprecation-date"
	extSunset            = "x-sunset"
	extDeprecationNotice = "x-deprecation-notice"
)

// minDeprecationMonths is the least time a deprecated feature is served
// between its deprecation date and its sunset.
const minDeprecationMonths = 6

// deprecation is one deprecated feature: a route, or one query parameter
// of a route.
type deprecation struct {
	// feature names it in the metric: "GET /recall" for a route,
	// "GET /recall?date_from" for a parameter.
	feature string
	since   time.Time
	sunset  time.Time
	notice  string
}

// routeDeprecations is what is deprecated of one route: the route itself
// (nil when it is not), and its parameters by name.
type routeDeprecations struct {
	route  *deprecation
	params map[string]*deprecation
}

// deprecationTable is every route's deprecations, by "METHOD /path" as the
// document writes its paths; a route with none is absent.
type deprecationTable map[string]*routeDeprecations

// docMethods are the operations of an OpenAPI path item.
var docMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// docDeprecable is what the table reads of an operation or a parameter.
type docDeprecable struct {
	Ref        string `json:"$ref"`
	Name       string `json:"name"`
	In         string `json:"in"`
	Deprecated bool   `json:"deprecated"`
	Since      string `json:"x-deprecation-date"`
	Sunset     string `json:"x-sunset"`
	Notice     string `json:"x-deprecation-notice"`
}

// docOperation is an operation with its parameters.
type docOperation struct {
	docDeprecable
	Parameters []docDeprecable `json:"parameters"`
}

// deprecationsOf reads the deprecations of an OpenAPI document. A feature
// marked deprecated without its date, sunset and notice, with a sunset
// less than minDeprecationMonths after its date, or extensions on a
// feature not marked deprecated, is an error: the document is wrong.
func deprecationsOf(doc []byte) (deprecationTable, error) {
	var d struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Parameters map[string]docDeprecable `json:"parameters"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("the OpenAPI document is not JSON: %w", err)
	}
	resolve := func(p docDeprecable) (docDeprecable, error) {
		if p.Ref == "" {
			return p, nil
		}
		name, ok := strings.CutPrefix(p.Ref, "#/components/parameters/")
		c, found := d.Components.Parameters[name]
		if !ok || !found {
			return p, fmt.Errorf("parameter $ref %q names no parameter of #/components/parameters", p.Ref)
		}
		return c, nil
	}
	table := deprecationTable{}
	var errs []error
	for path, item := range d.Paths {
		var shared []docDeprecable
		if raw, ok := item["parameters"]; ok {
			if err := json.Unmarshal(raw, &shared); err != nil {
				return nil, fmt.Errorf("the parameters of %s: %w", path, err)
			}
		}
		for _, m := range docMethods {
			raw, ok := item[m]
			if !ok {
				continue
			}
			var op docOperation
			if err := json.Unmarshal(raw, &op); err != nil {
				return nil, fmt.Errorf("%s %s: %w", strings.ToUpper(m), path, err)
			}
			key := strings.ToUpper(m) + " " + path
			rd := &routeDeprecations{}
			dep, err := readDeprecation(key, op.docDeprecable)
			errs = append(errs, err)
			rd.route = dep
			for _, p := range slices.Concat(shared, op.Parameters) {
				p, err := resolve(p)
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", key, err))
					continue
				}
				dep, err := readDeprecation(key+"?"+p.Name, p)
				errs = append(errs, err)
				if dep == nil {
					continue
				}
				if p.In != "query" {
					errs = append(errs, fmt.Errorf("%s: only a query parameter can be deprecated, and %s is in %s", key, p.Name, p.In))
					continue
				}
				if rd.params == nil {
					rd.params = map[string]*deprecation{}
				}
				rd.params[p.Name] = dep
			}
			if rd.route != nil || rd.params != nil {
				table[key] = rd
			}
		}
	}
	return table, errors.Join(errs...)
}

// readDeprecation reads the deprecation of feature from what the document
// says of it: nil when it is not deprecated.
func readDeprecation(feature string, f docDeprecable) (*deprecation, error) {
	if !f.Deprecated {
		if f.Since != "" || f.Sunset != "" || f.Notice != "" {
			return nil, fmt.Errorf("%s has %s, %s or %s but is not marked \"deprecated\": true; mark it, or remove them",
				feature, extDeprecationDate, extSunset, extDeprecationNotice)
		}
		return nil, nil
	}
	since, err1 := time.Parse(time.DateOnly, f.Since)
	sunset, err2 := time.Parse(time.DateOnly, f.Sunset)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("%s is deprecated with %s %q and %s %q; give both as dates, YYYY-MM-DD",
			feature, extDeprecationDate, f.Since, extSunset, f.Sunset)
	}
	if earliest := since.AddDate(0, minDeprecationMonths, 0); sunset.Before(earliest) {
		return nil, fmt.Errorf("%s is deprecated on %s with its sunset on %s; a deprecated feature is served for at least %d months, so its sunset is %s or later",
			feature, f.Since, f.Sunset, minDeprecationMonths, earliest.Format(time.DateOnly))
	}
	u, err := url.Parse(f.Notice)
	if err != nil || f.Notice == "" || strings.ContainsAny(f.Notice, " <>\"") || (u.Scheme != "https" && !strings.HasPrefix(f.Notice, "/")) {
		return nil, fmt.Errorf("%s is deprecated with %s %q; give the https URL (or the path on this API) of the page announcing it",
			feature, extDeprecationNotice, f.Notice)
	}
	return &deprecation{feature: feature, since: since, sunset: sunset, notice: f.Notice}, nil
}

// deprecations returns the table of the Server's document, read once,
// when the router is built. A malformed deprecation panics there, at
// start, rather than sending wrong dates: a test checks the embedded
// document, and one set in OpenAPI is the caller's wiring.
func (s *Server) deprecations() deprecationTable {
	s.deprecationOnce.Do(func() {
		doc := s.OpenAPI
		if doc == nil {
			doc = openAPIDoc
		}
		t, err := deprecationsOf(doc)
		if err != nil {
			panic("edge: the OpenAPI document's deprecations: " + err.Error())
		}
		s.deprecationTable = t
	})
	return s.deprecationTable
}

// deprecationsFor returns the deprecations of rt, nil when it has none.
func (t deprecationTable) deprecationsFor(rt route) *routeDeprecations {
	path := strings.TrimSuffix(rt.pattern, "{$}")
	for _, m := range rt.methods {
		if d := t[m+" "+path]; d != nil {
			return d
		}
	}
	return nil
}

// markDeprecated sets the deprecation headers of a request using what rd
// holds deprecated (the route, or parameters p names) and counts it by
// feature and key; it does nothing for a request using none.
func (s *Server) markDeprecated(w http.ResponseWriter, rd *routeDeprecations, p *params, key *rappel.APIKey) {
	var used []*deprecation
	if rd.route != nil {
		used = append(used, rd.route)
	}
	for _, q := range p.list {
		if d := rd.params[q.name]; d != nil && !slices.Contains(used, d) {
			used = append(used, d)
		}
	}
	if len(used) == 0 {
		return
	}
	// One Deprecation and one Sunset a response: the earliest, which is
	// when the client must have moved by.
	since, sunset := used[0].since, used[0].sunset
	h := w.Header()
	var notices []string
	for _, d := range used {
		if d.since.Before(since) {
			since = d.since
		}
		if d.sunset.Before(sunset) {
			sunset = d.sunset
		}
		if !slices.Contains(notices, d.notice) {
			notices = append(notices, d.notice)
			h.Add("Link", "<"+d.notice+`>; rel="deprecation"`)
			h.Add("Link", "<"+d.notice+`>; rel="sunset"`)
		}
		s.countDeprecated(d.feature, key)
	}
	h.Set("Deprecation", "@"+strconv.FormatInt(since.Unix(), 10))
	h.Set("Sunset", sunset.UTC().Format(http.TimeFormat))
}

// maxDeprecatedKeys bounds the key label of rappel_deprecated_requests_total:
// keys are issued by the operator, so they are few, but the counter must
// not grow without bound on a node with many; past it, keys count as
// "other".
const maxDeprecatedKeys = 1000

// deprecatedKeys are the key labels rappel_deprecated_requests_total has
// used, to hold them under maxDeprecatedKeys.
type deprecatedKeys struct {
	mu   sync.Mutex
	seen map[string]bool
}

// label returns the key label of a request by key (nil without one).
func (k *deprecatedKeys) label(key *rappel.APIKey) string {
	if key == nil {
		return "anonymous"
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.seen[key.ID] {
		return key.ID
	}
	if len(k.seen) >= maxDeprecatedKeys {
		return "other"
	}
	if k.seen == nil {
		k.seen = map[string]bool{}
	}
	k.seen[key.ID] = true
	return key.ID
}

// countDeprecated counts one request using feature by key.
func (s *Server) countDeprecated(feature string, key *rappel.APIKey) {
	m := s.initMetrics()
	m.deprecated.WithLabelValues(feature, m.deprecatedKeys.label(key)).Inc()
}
