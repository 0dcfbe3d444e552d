package edge

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/rappel-ca/rappel"
)

// Watchlists (docs/api.md, "Watching a catalog"): a key registers a
// catalog once, its items read as POST /recall/match reads them, and
// every refresh matches its changes against the key's lists. A list is
// stored whole or not at all: any item that cannot be read makes the
// request a 422 naming each problem at ["body", "items", i, field], so
// that a list never holds fewer items than its owner sent.

// Bounds of a watchlist's body.
const (
	// maxWatchBody bounds the body: about 500 bytes an item.
	maxWatchBody = 48 << 20
	// watchItemsPerUnit is how many items a cost unit of a creation
	// pays for: storing a list costs a unit per thousand items.
	watchItemsPerUnit = 1000
	// Pages of items and hits.
	defaultWatchPage, maxWatchPage = 100, 1000
)

const watchExample = `send a JSON object such as '{"name": "Store 12", "items": [{"id": "sku-1", "gtin": "0 42272 90583 6"}]}'`

// pricedWatchlist is what a creation's cost pays for.
var pricedWatchlist = priced{"this watchlist", "send fewer items at once, in several lists"}

// watchlists returns the watchlist service and the caller's key ID, or a
// 503 when the node has none.
func (s *Server) watchlists(w http.ResponseWriter) (rappel.Watchlists, string, error) {
	if err := paramsOf(w).err(); err != nil {
		return nil, "", err
	}
	if s.Watchlists == nil {
		return nil, "", rappel.Errorf(rappel.EUNAVAILABLE, "Watchlists are not enabled on this server.")
	}
	key, err := callerKey(w)
	return s.Watchlists, key, err
}

// createWatchlist answers POST /recall/watchlists with 201 and the list.
func (s *Server) createWatchlist(w http.ResponseWriter, r *http.Request) error {
	svc, key, err := s.watchlists(w)
	if err != nil {
		return err
	}
	if err := checkJSONBody(r); err != nil {
		return err
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxWatchBody+1))
	if err != nil {
		return errUnreadableBody
	}
	if len(body) > maxWatchBody {
		return rappel.Invalids(rappel.InvalidTooLong(rappel.BodyLoc(""), "", -1, maxWatchBody))
	}
	name, items, err := decodeWatchBody(body)
	if err != nil {
		return err
	}
	if _, err := s.payFor(w, exchangeOf(w), 1+len(items)/watchItemsPerUnit, pricedWatchlist); err != nil {
		return err
	}
	v, err := svc.Create(r.Context(), key, name, items)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/recall/watchlists/"+v.ID)
	return s.writeStatus(w, r, http.StatusCreated, v)
}

// decodeWatchBody reads a body of POST /recall/watchlists: an optional
// name and the items, each read as POST /recall/match reads it, with an
// id of its own (its index when it gives none). Every problem of the body
// and of its items is one 422.
func decodeWatchBody(body []byte) (string, []rappel.CatalogItem, error) {
	top, err := bodyObject(body, watchExample)
	if err != nil {
		return "", nil, err
	}
	list, problems := itemList(top, []string{"name", "items"}, rappel.MaxWatchItems, "split the catalog into lists of %d items or fewer")
	name := ""
	if raw, ok := top["name"]; ok && string(raw) != "null" {
		switch {
		case json.Unmarshal(raw, &name) != nil:
			problems = append(problems, rappel.InvalidValue(rappel.BodyLoc("name"), nil, rappel.Reason{Problem: "is not a string", Fix: "send a name such as 'Store 12', or leave it out"}))
		case len(name) > rappel.MaxWatchlistName:
			problems = append(problems, rappel.InvalidTooLong(rappel.BodyLoc("name"), name, len(name), rappel.MaxWatchlistName))
		default:
			name = strings.TrimSpace(name)
			if why, bad := rappel.BadChar(name, false); bad {
				problems = append(problems, rappel.InvalidValue(rappel.BodyLoc("name"), name, why))
			}
		}
	}
	items := make([]rappel.CatalogItem, 0, len(list))
	byID := map[string]int{}
	for i, raw := range list {
		e, it := decodeMatchItem(i, raw)
		it.ID = strconv.Itoa(i)
		if e.id != nil {
			var s string
			if json.Unmarshal(e.id, &s) != nil {
				s = string(e.id) // a number, as sent
			}
			it.ID = s
		}
		// Ids are checked for every item, read or not, so that one
		// resend fixes every problem.
		if it.ID == "" {
			problems = append(problems, rappel.InvalidValue(itemLoc(i, "id"), "", rappel.Reason{
				Problem: "is empty", Fix: "give the item's own id, or leave it out to have its index as its id"}))
		} else if j, dup := byID[it.ID]; dup {
			problems = append(problems, rappel.InvalidValue(itemLoc(i, "id"), it.ID, rappel.Reason{
				Problem: fmt.Sprintf("is the id of item %d too", j), Fix: "give each item of a list its own id: hits name items by it"}))
		} else {
			byID[it.ID] = i
		}
		if e.problems != nil {
			problems = append(problems, e.problems...)
			continue
		}
		items = append(items, it)
	}
	if len(problems) > 0 {
		if len(problems) > maxWatchProblems {
			problems = problems[:maxWatchProblems]
		}
		return "", nil, rappel.Invalids(problems...)
	}
	return name, items, nil
}

// maxWatchProblems bounds the problems a 422 lists: a catalog exported
// wrong has the same problem in every item.
const maxWatchProblems = 100

// watchlistList is the body of GET /recall/watchlists.
type watchlistList struct {
	Watchlists []*rappel.WatchlistView `json:"watchlists"`
}

// listWatchlists answers GET /recall/watchlists with the key's lists.
func (s *Server) listWatchlists(w http.ResponseWriter, r *http.Request) error {
	svc, key, err := s.watchlists(w)
	if err != nil {
		return err
	}
	list, err := svc.List(r.Context(), key)
	if err != nil {
		return err
	}
	if list == nil {
		list = []*rappel.WatchlistView{}
	}
	return s.writeValue(w, r, watchlistList{Watchlists: list})
}

// getWatchlist answers GET /recall/watchlists/{id}.
func (s *Server) getWatchlist(w http.ResponseWriter, r *http.Request) error {
	svc, key, err := s.watchlists(w)
	if err != nil {
		return err
	}
	v, err := svc.Get(r.Context(), key, r.PathValue("id"))
	if err != nil {
		return err
	}
	return s.writeValue(w, r, v)
}

// deleteWatchlist answers DELETE /recall/watchlists/{id} with 204.
func (s *Server) deleteWatchlist(w http.ResponseWriter, r *http.Request) error {
	svc, key, err := s.watchlists(w)
	if err != nil {
		return err
	}
	if err := svc.Delete(r.Context(), key, r.PathValue("id")); err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// watchPage reads the after and limit of a page.
func watchPage(w http.ResponseWriter) (after string, limit int, err error) {
	p := paramsOf(w)
	after, _ = p.str("after")
	limit = p.int("limit", 1, maxWatchPage, defaultWatchPage)
	return after, limit, p.err()
}

// pageOf cuts got, asked for with limit+1, into a page of limit, the id
// of each element given by id.
func pageOf[T any](got []T, limit int, id func(T) string) (list []T, next string) {
	if len(got) > limit {
		return got[:limit], id(got[limit-1])
	}
	if got == nil {
		got = []T{}
	}
	return got, ""
}

// watchItemPage is the body of GET /recall/watchlists/{id}/items: a page
// of items and the after of the next, "" on the last.
type watchItemPage struct {
	List []rappel.CatalogItem `json:"items"`
	Next string               `json:"next_after,omitempty"`
}

// listWatchItems answers GET /recall/watchlists/{id}/items.
func (s *Server) listWatchItems(w http.ResponseWriter, r *http.Request) error {
	svc, key, err := s.watchlists(w)
	if err != nil {
		return err
	}
	after, limit, err := watchPage(w)
	if err != nil {
		return err
	}
	items, err := svc.Items(r.Context(), key, r.PathValue("id"), after, limit+1)
	if err != nil {
		return err
	}
	var page watchItemPage
	page.List, page.Next = pageOf(items, limit, func(it rappel.CatalogItem) string { return it.ID })
	return s.writeValue(w, r, page)
}

// watchHitPage is the body of GET /recall/watchlists/{id}/hits.
type watchHitPage struct {
	Hits []*rappel.WatchHitView `json:"hits"`
	Next string                 `json:"next_after,omitempty"`
}

// listWatchHits answers GET /recall/watchlists/{id}/hits, newest first.
func (s *Server) listWatchHits(w http.ResponseWriter, r *http.Request) error {
	svc, key, err := s.watchlists(w)
	if err != nil {
		return err
	}
	after, limit, err := watchPage(w)
	if err != nil {
		return err
	}
	hits, err := svc.Hits(r.Context(), key, r.PathValue("id"), after, limit+1)
	if err != nil {
		return err
	}
	var page watchHitPage
	page.Hits, page.Next = pageOf(hits, limit, func(h *rappel.WatchHitView) string { return h.ID })
	w.Header().Set("Cache-Control", "no-store")
	return s.writeValue(w, r, page)
}

// handleWatchHit answers PATCH /recall/watchlists/{id}/hits/{hit_id},
// whose body {"handled": true} marks the hit handled ({"handled": false}
// unmarks it), with the hit.
func (s *Server) handleWatchHit(w http.ResponseWriter, r *http.Request) error {
	svc, key, err := s.watchlists(w)
	if err != nil {
		return err
	}
	var handled *bool
	items, err := decodeFields(r, 1<<10, `send a JSON object such as '{"handled": true}'`, []string{"handled"}, map[string]any{"handled": &handled})
	if err != nil {
		return err
	}
	if len(items) == 0 && handled == nil {
		items = append(items, rappel.InvalidMissing(rappel.BodyLoc("handled"), "send true to mark the hit handled, false to mark it not handled"))
	}
	if len(items) > 0 {
		return rappel.Invalids(items...)
	}
	h, err := svc.Handle(r.Context(), key, r.PathValue("id"), r.PathValue("hit_id"), *handled)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	return s.writeValue(w, r, h)
}
