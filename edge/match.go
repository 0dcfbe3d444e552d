package edge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/match"
)

// POST /recall/match screens a catalog (docs/api.md, "Screening a catalog:
// POST /recall/match"): the handler reads the body into items, prices the
// batch like a search and admits it the same way, has package match
// answer each item, and writes the answers in the items' order. An item
// that cannot be read gets its own 422 entry, its problems at ["body",
// "items", i, field], while the others are answered.

// Bounds of a batch.
const (
	// maxMatchItems is the most items a batch holds.
	maxMatchItems = 1000
	// maxMatchBody bounds the body: a kilobyte an item.
	maxMatchBody = 1 << 20
	// maxItemText bounds each text field of an item.
	maxItemText = 256
	// Model years an item's year may take: from the first car on, to
	// the years a model is sold ahead of.
	minModelYear, maxModelYear = 1886, 2100
)

// matchItemFields are the fields of an item.
var matchItemFields = []string{"id", "name", "brand", "gtin", "model", "lot", "best_before", "date", "year", "category", "lang"}

// matchExample is the fix of a body that is not the object it should be.
const matchExample = `send a JSON object such as '{"items": [{"id": "sku-1", "gtin": "0 42272 90583 6", "lot": "60D0924"}]}'`

// matchTimeoutMessage is the 504 of a batch past the query budget.
const matchTimeoutMessage = "Screening the items took longer than the query budget; send fewer items at once, or items with barcodes, which are the quickest to match."

// matchRequest is a decoded body: one entry per item sent, and the items
// that could be read, in order, for package match.
type matchRequest struct {
	entries []matchEntry
	items   []match.Item
}

// matchEntry is one item as sent: its id, echoed; its barcode as read;
// its problems, when it could not be read; else its place in items.
type matchEntry struct {
	id       json.RawMessage
	gtin     rappel.GTIN
	problems []rappel.Invalid
	item     int
}

// matchAnswer is the body of a 200.
type matchAnswer struct {
	AsOf    string            `json:"as_of"`
	Count   int               `json:"count"`
	Counts  map[string]int    `json:"counts"`
	Answers []matchItemAnswer `json:"items"`
	Dataset string            `json:"dataset"`
}

// matchItemAnswer is one item's answer: a status and its candidates, or
// the status 422 and the item's problems.
type matchItemAnswer struct {
	Index      int                `json:"index"`
	ID         json.RawMessage    `json:"id,omitempty"`
	Status     any                `json:"status"`
	GTIN       string             `json:"gtin,omitempty"`
	Message    string             `json:"message,omitempty"`
	Candidates *[]match.Candidate `json:"candidates,omitempty"`
	Detail     []rappel.Invalid   `json:"detail,omitempty"`
}

// matchCatalog answers POST /recall/match.
func (s *Server) matchCatalog(w http.ResponseWriter, r *http.Request) error {
	if err := paramsOf(w).err(); err != nil {
		return err
	}
	if s.Lookup == nil {
		return rappel.Errorf(rappel.EUNAVAILABLE,
			"Screening a catalog is not available on this node, which has no store to look barcodes up in; retry shortly or use another node.")
	}
	if err := checkJSONBody(r); err != nil {
		return err
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxMatchBody+1))
	if err != nil {
		return errUnreadableBody
	}
	if len(body) > maxMatchBody {
		return rappel.Invalids(rappel.InvalidTooLong(rappel.BodyLoc(""), "", -1, maxMatchBody))
	}
	req, err := decodeMatchBody(body)
	if err != nil {
		return err
	}
	snap := s.Catalog.Snapshot()
	m := &match.Matcher{Records: s.matchCache(snap), Lookup: s.Lookup}
	if wi, ok := snap.(match.WordIndex); ok {
		m.Words = wi
	}
	// The budget runs from here, as a search's does: pricing, waiting for
	// a slot and matching all count against it.
	ctx, cancel := context.WithTimeout(r.Context(), s.QueryBudget)
	defer cancel()
	cost := m.Cost(req.items)
	mode, err := s.payFor(w, exchangeOf(w), cost, pricedBatch)
	if err != nil {
		return err
	}
	if s.expensive(cost) {
		release, err := s.acquire(ctx, w, cost, mode)
		if err != nil {
			return err
		}
		defer release()
		ctx = yielding{ctx}
	}
	results, err := m.Screen(ctx, req.items)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return &rappel.Error{Code: rappel.ETIMEOUT, Message: matchTimeoutMessage, Err: err}
		}
		return err
	}
	return s.writeValue(w, r, matchAnswerOf(snap.Info(), req, results))
}

// matchAnswerOf assembles the answer of req's items from the results of
// those that could be read.
func matchAnswerOf(info rappel.DatasetInfo, req *matchRequest, results []match.Result) matchAnswer {
	a := matchAnswer{AsOf: info.UpdatedAt.UTC().Format(time.RFC3339), Count: len(req.entries),
		Counts: map[string]int{"invalid": 0}, Answers: make([]matchItemAnswer, len(req.entries)), Dataset: rappel.DatasetAgencies}
	if info.Synthetic() {
		a.Dataset = rappel.DatasetSynthetic
	}
	for _, st := range match.Statuses {
		a.Counts[st] = 0
	}
	for i, e := range req.entries {
		it := matchItemAnswer{Index: i, ID: e.id, GTIN: string(e.gtin)}
		if e.problems != nil {
			it.Status, it.Detail = http.StatusUnprocessableEntity, e.problems
			a.Counts["invalid"]++
		} else {
			res := results[e.item]
			cands := res.Candidates
			if cands == nil {
				cands = []match.Candidate{}
			}
			it.Status, it.Message, it.Candidates = res.Status, res.Message, &cands
			a.Counts[res.Status]++
		}
		a.Answers[i] = it
	}
	return a
}

// matchCache returns the prepared records of snap, keeping one cache, the
// current snapshot's, across requests.
func (s *Server) matchCache(snap rappel.Snapshot) *match.Cache {
	if c := s.matchRecords.Load(); c.For(snap) {
		return c
	}
	c := match.NewCache(snap)
	s.matchRecords.Store(c)
	return c
}

// decodeMatchBody reads a body of POST /recall/match: a JSON object with
// an array of items. What makes the whole body unreadable (no JSON object,
// no items array, no item, too many, another field) is a 422 of the body;
// an item that cannot be read is an entry with its problems.
func decodeMatchBody(body []byte) (*matchRequest, error) {
	top, err := bodyObject(body, matchExample)
	if err != nil {
		return nil, err
	}
	list, problems := itemList(top, []string{"items"}, maxMatchItems, "send the catalog in batches of %d items or fewer")
	if len(problems) > 0 {
		return nil, rappel.Invalids(problems...)
	}
	req := &matchRequest{entries: make([]matchEntry, len(list))}
	for i, raw := range list {
		e, it := decodeMatchItem(i, raw)
		if e.problems == nil {
			e.item = len(req.items)
			req.items = append(req.items, it)
		}
		req.entries[i] = e
	}
	return req, nil
}

// decodeItemID reads an item's id: a string, echoed as a JSON string,
// or a number, echoed as sent.
func decodeItemID(loc []any, v json.RawMessage) (json.RawMessage, []rappel.Invalid) {
	var id string
	var n json.Number
	switch {
	case json.Unmarshal(v, &id) == nil:
		if len(id) > maxItemText {
			return nil, []rappel.Invalid{rappel.InvalidTooLong(loc, id, len(id), maxItemText)}
		}
		if why, isBad := rappel.BadChar(id, false); isBad {
			return nil, []rappel.Invalid{rappel.InvalidValue(loc, nil, why)}
		}
		b, _ := json.Marshal(id) // a string always encodes
		return b, nil
	case json.Unmarshal(v, &n) == nil && len(n) <= 64:
		return json.RawMessage(n.String()), nil
	}
	return nil, []rappel.Invalid{rappel.InvalidValue(loc, nil, rappel.Reason{Problem: "is not a string or a number",
		Fix: "send the identifier the catalog gives the product, such as 'sku-1', to find its answer by"})}
}

// decodeItemText reads a text field of an item, its spaces trimmed: at
// most maxItemText bytes, without control or invisible characters.
func decodeItemText(loc []any, v json.RawMessage) (string, []rappel.Invalid) {
	var str string
	if json.Unmarshal(v, &str) != nil {
		return "", []rappel.Invalid{rappel.InvalidValue(loc, nil, rappel.Reason{Problem: "is not a string", Fix: "send a string, or null to leave it out"})}
	}
	str = strings.TrimSpace(str)
	if len(str) > maxItemText {
		return "", []rappel.Invalid{rappel.InvalidTooLong(loc, str, len(str), maxItemText)}
	}
	if why, isBad := rappel.BadChar(str, false); isBad {
		return "", []rappel.Invalid{rappel.InvalidValue(loc, nil, why)}
	}
	return str, nil
}

// decodeItemYear reads a vehicle's model year: a whole number from the
// first car on to the years a model is sold ahead of.
func decodeItemYear(loc []any, v json.RawMessage) (int, []rappel.Invalid) {
	var n json.Number
	if json.Unmarshal(v, &n) != nil {
		return 0, []rappel.Invalid{rappel.InvalidValue(loc, nil, rappel.Reason{Problem: "is not a number", Fix: "send the model year of the vehicle, such as 2021"})}
	}
	y, err := strconv.Atoi(n.String())
	switch {
	case err != nil:
		return 0, []rappel.Invalid{rappel.InvalidInt(loc, n.String())}
	case y < minModelYear:
		return 0, []rappel.Invalid{rappel.InvalidMin(loc, n.String(), minModelYear)}
	case y > maxModelYear:
		return 0, []rappel.Invalid{rappel.InvalidMax(loc, n.String(), maxModelYear)}
	}
	return y, nil
}

// itemList returns the items array of a body's top object, and the
// problems of the body as a whole: a field not in fields, no items array,
// no item, more than max (tooMany is the fix, with max in it).
func itemList(top map[string]json.RawMessage, fields []string, max int, tooMany string) ([]json.RawMessage, []rappel.Invalid) {
	var problems []rappel.Invalid
	for _, k := range slices.Sorted(maps.Keys(top)) {
		if !slices.Contains(fields, k) {
			problems = append(problems, rappel.InvalidExtra(rappel.BodyLoc(k), nil, fields))
		}
	}
	raw, ok := top["items"]
	var list []json.RawMessage
	switch {
	case !ok || string(raw) == "null":
		problems = append(problems, rappel.InvalidMissing(rappel.BodyLoc("items"),
			"send the products of the catalog as an array of objects, such as '[{\"gtin\": \"0 42272 90583 6\"}]'"))
	case json.Unmarshal(raw, &list) != nil:
		problems = append(problems, rappel.InvalidValue(rappel.BodyLoc("items"), nil,
			rappel.Reason{Problem: "is not an array", Fix: "send the products of the catalog as an array of objects, such as '[{\"gtin\": \"0 42272 90583 6\"}]'"}))
	case len(list) == 0:
		problems = append(problems, rappel.InvalidValue(rappel.BodyLoc("items"), nil,
			rappel.Reason{Problem: "holds no item", Fix: "send at least one product"}))
	case len(list) > max:
		problems = append(problems, rappel.InvalidValue(rappel.BodyLoc("items"), nil,
			rappel.Reason{Problem: fmt.Sprintf("holds %d items, more than the %d a request may hold", len(list), max),
				Fix: fmt.Sprintf(tooMany, max), Ctx: map[string]any{"max_items": max}}))
	}
	return list, problems
}

// itemLoc is the loc of field of item i, or of the item when field is "".
func itemLoc(i int, field string) []any {
	if field == "" {
		return []any{rappel.InBody, "items", i}
	}
	return []any{rappel.InBody, "items", i, field}
}

// decodeMatchItem reads item i: its fields, each checked, and every
// problem of them at once.
func decodeMatchItem(i int, raw json.RawMessage) (matchEntry, match.Item) {
	var e matchEntry
	var it match.Item
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		e.problems = []rappel.Invalid{rappel.InvalidValue(itemLoc(i, ""), nil, rappel.Reason{Problem: "is not a JSON object",
			Fix: `send each item as an object such as '{"id": "sku-1", "gtin": "0 42272 90583 6", "lot": "60D0924"}'`})}
		return e, it
	}
	texts := map[string]*string{"name": &it.Name, "brand": &it.Brand, "model": &it.Model, "lot": &it.Lot,
		"best_before": &it.Date, "date": &it.Date, "category": &it.Category}
	var problems []rappel.Invalid
	bad := func(field string, r rappel.Reason) {
		problems = append(problems, rappel.InvalidValue(itemLoc(i, field), nil, r))
	}
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		v := fields[k]
		loc := itemLoc(i, k)
		if !slices.Contains(matchItemFields, k) {
			problems = append(problems, rappel.InvalidExtra(loc, nil, matchItemFields))
			continue
		}
		if string(v) == "null" {
			continue
		}
		if why, isBad := rappel.BadJSONText(v); isBad {
			bad(k, why)
			continue
		}
		switch k {
		case "id":
			var ps []rappel.Invalid
			e.id, ps = decodeItemID(loc, v)
			problems = append(problems, ps...)
			continue
		case "year":
			var ps []rappel.Invalid
			it.Year, ps = decodeItemYear(loc, v)
			problems = append(problems, ps...)
			continue
		}
		str, ps := decodeItemText(loc, v)
		if problems = append(problems, ps...); ps != nil || str == "" {
			continue
		}
		switch k {
		case "gtin":
			g, err := rappel.ParseGTIN(str)
			if err != nil {
				problems = append(problems, rappel.InvalidValue(loc, str, barcodeReason(str, err)))
				continue
			}
			it.GTIN, e.gtin = g, g
		case "lang":
			if !slices.Contains(rappel.Langs, str) {
				problems = append(problems, rappel.InvalidEnum(loc, str, rappel.Langs))
				continue
			}
			it.Lang = str
		default:
			*texts[k] = str
		}
	}
	if bb, d := fields["best_before"], fields["date"]; len(bb) > 0 && len(d) > 0 && string(bb) != "null" && string(d) != "null" {
		bad("date", rappel.Reason{Problem: "is given with 'best_before'", Fix: "give the date printed on the item once, in one of them"})
	}
	if len(problems) == 0 && it.GTIN == "" && it.Name == "" && it.Brand == "" && it.Model == "" {
		bad("", rappel.Reason{Problem: "holds nothing to match on", Fix: "give at least one of 'gtin', 'brand', 'name' or 'model'"})
	}
	if len(problems) > 0 {
		e.problems = problems
	}
	return e, it
}
