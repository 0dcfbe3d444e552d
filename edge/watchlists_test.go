package edge

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/alerts"
)

// TestWatchlists_Routes drives /recall/watchlists through the real router
// on a real Pebble store with two keys: a list is created with its items
// and ids, listed, paged and deleted by its key; the other key's requests
// answer 404 as for a list that does not exist; a list with any item that
// cannot be read is refused whole, each problem at its item; a key without
// one is 403.
func TestWatchlists_Routes(t *testing.T) {
	st := mustStore(t, lookupRecords())
	s, _ := MustServer(t, MustCatalog(t, lookupRecords()))
	s.Keys = planKeys{"rk_a": "a", "rk_b": "b"}
	s.Plans = map[string]rappel.Plan{"a": {Name: "a", Rate: 1000, Burst: 1000, Monthly: 1_000_000}, "b": {Name: "b", Rate: 1000, Burst: 1000, Monthly: 1_000_000}}
	s.Watchlists = alerts.NewWatchService(st)
	base := MustHTTP(t, s.Handler()).URL
	do := func(method, path, key, body string) (int, []byte) {
		t.Helper()
		h := map[string]string{}
		if key != "" {
			h["X-Gateway-Key"] = key
		}
		resp, b := docRequest(t, base, docCase{method, path, body, h, 0})
		return resp.StatusCode, b
	}
	code, body := do("POST", "/recall/watchlists", "rk_a", `{"name": "Store 12", "items": [
		{"id": "sku-1", "gtin": "0 42272 90583 6", "lot": "60D0924"},
		{"id": 7, "brand": "Honda", "model": "Ridgeline", "year": 2018},
		{"brand": "Amy's", "name": "Lentil soup"}]}`)
	var wl rappel.WatchlistView
	if code != http.StatusCreated || json.Unmarshal(body, &wl) != nil || wl.Size != 3 || wl.Name != "Store 12" || !strings.HasPrefix(wl.ID, "wl_") {
		t.Fatalf("POST: %d %s", code, body)
	}
	if strings.Contains(string(body), `"key"`) {
		t.Errorf("the answer shows the owner's key: %s", body)
	}
	code, body = do("GET", "/recall/watchlists/"+wl.ID+"/items?limit=2", "rk_a", "")
	var page struct {
		Items []rappel.CatalogItem `json:"items"`
		Next  string               `json:"next_after"`
	}
	if code != 200 || json.Unmarshal(body, &page) != nil || len(page.Items) != 2 || page.Items[0].ID != "2" || page.Items[1].ID != "7" || page.Next != "7" {
		t.Fatalf("first page of items: %d %s; want items 2 (its index) and 7 (its number), then more", code, body)
	}
	if page.Items[1].Year != 2018 || page.Items[1].Model != "Ridgeline" {
		t.Errorf("the vehicle item as stored: %+v", page.Items[1])
	}
	code, body = do("GET", "/recall/watchlists/"+wl.ID+"/items?limit=2&after=7", "rk_a", "")
	page.Next = ""
	if code != 200 || json.Unmarshal(body, &page) != nil || len(page.Items) != 1 || page.Items[0].GTIN != "00042272905836" || page.Next != "" {
		t.Fatalf("second page of items: %d %s; want sku-1 with its barcode as a GTIN-14, last", code, body)
	}
	if code, body := do("GET", "/recall/watchlists", "rk_a", ""); code != 200 || !strings.Contains(string(body), wl.ID) {
		t.Errorf("the key's lists: %d %s", code, body)
	}
	if code, body := do("GET", "/recall/watchlists/"+wl.ID+"/hits", "rk_a", ""); code != 200 || string(body) != `{"hits":[]}` {
		t.Errorf("hits of a new list: %d %s", code, body)
	}
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/recall/watchlists/" + wl.ID, ""}, {"GET", "/recall/watchlists/" + wl.ID + "/items", ""},
		{"GET", "/recall/watchlists/" + wl.ID + "/hits", ""}, {"DELETE", "/recall/watchlists/" + wl.ID, ""},
		{"PATCH", "/recall/watchlists/" + wl.ID + "/hits/hit_1", `{"handled": true}`},
	} {
		if code, body := do(c.method, c.path, "rk_b", c.body); code != http.StatusNotFound {
			t.Errorf("%s %s by another key: %d %s; want 404", c.method, c.path, code, body)
		}
	}
	if code, body := do("GET", "/recall/watchlists", "", ""); code != http.StatusForbidden {
		t.Errorf("without a key: %d %s; want 403", code, body)
	}
	if code, body := do("PATCH", "/recall/watchlists/"+wl.ID+"/hits/hit_1", "rk_a", `{"handled": true}`); code != http.StatusNotFound || !strings.Contains(string(body), "GET /recall/watchlists/"+wl.ID+"/hits") {
		t.Errorf("marking a hit the list lacks: %d %s; want 404 saying where the hits are", code, body)
	}
	if code, body := do("PATCH", "/recall/watchlists/"+wl.ID+"/hits/hit_1", "rk_a", `{"handled": "yes"}`); code != 422 || !strings.Contains(string(body), "true or false") {
		t.Errorf("handled as a string: %d %s; want a 422", code, body)
	}
	if code, body := do("PATCH", "/recall/watchlists/"+wl.ID+"/hits/hit_1", "rk_a", `{}`); code != 422 || !strings.Contains(string(body), "handled") {
		t.Errorf("no handled: %d %s; want a 422", code, body)
	}

	// One bad item refuses the list, naming each problem at its item.
	code, body = do("POST", "/recall/watchlists", "rk_b", `{"items": [
		{"id": "a", "gtin": "0 42272 90583 7"}, {"id": "b", "name": "x"}, {"id": "a", "brand": "Acme"}, {"year": 2019}], "colour": 1}`)
	var e struct {
		Detail []struct {
			Loc []any  `json:"loc"`
			Msg string `json:"msg"`
		} `json:"detail"`
	}
	if code != 422 || json.Unmarshal(body, &e) != nil {
		t.Fatalf("a list with bad items: %d %s", code, body)
	}
	locs := map[string]string{}
	for _, d := range e.Detail {
		l, _ := json.Marshal(d.Loc)
		locs[string(l)] = d.Msg
	}
	for _, want := range []string{`["body","colour"]`, `["body","items",0,"gtin"]`, `["body","items",2,"id"]`, `["body","items",3]`} {
		if locs[want] == "" {
			t.Errorf("no problem at %s: %s", want, body)
		}
	}
	if !strings.Contains(locs[`["body","items",2,"id"]`], "item 0") {
		t.Errorf("the repeated id's problem: %q", locs[`["body","items",2,"id"]`])
	}
	if code, body := do("GET", "/recall/watchlists", "rk_b", ""); code != 200 || string(body) != `{"watchlists":[]}` {
		t.Errorf("a refused list was stored: %d %s", code, body)
	}

	// The cap of lists per key.
	for i := range rappel.MaxWatchlistsPerKey - 1 {
		if code, body := do("POST", "/recall/watchlists", "rk_a", fmt.Sprintf(`{"items": [{"brand": "Acme %d"}]}`, i)); code != 201 {
			t.Fatalf("list %d: %d %s", i+2, code, body)
		}
	}
	if code, body := do("POST", "/recall/watchlists", "rk_a", `{"items": [{"brand": "Acme"}]}`); code != 400 || !strings.Contains(string(body), "DELETE /recall/watchlists/{id}") {
		t.Errorf("past the cap: %d %s; want 400 saying what to do", code, body)
	}
	if code, _ := do("DELETE", "/recall/watchlists/"+wl.ID, "rk_a", ""); code != http.StatusNoContent {
		t.Fatalf("DELETE by its key: %d", code)
	}
	if code, _ := do("GET", "/recall/watchlists/"+wl.ID, "rk_a", ""); code != http.StatusNotFound {
		t.Fatalf("GET after DELETE: %d", code)
	}
}

// FuzzWatchlistBody decodes arbitrary bodies of POST /recall/watchlists:
// it never panics; a refusal is a 422 whose every problem is a sentence at
// a place in the body; what it accepts is at least one item, each with an
// id no other item has and something to match on.
func FuzzWatchlistBody(f *testing.F) {
	for _, s := range []string{
		`{"name":"Store 12","items":[{"id":"sku-1","gtin":"0 42272 90583 6","lot":"60D0924"},{"id":2,"brand":"Honda","model":"Civic","year":2019}]}`,
		`{"items":[{"id":"a","name":"x y"},{"id":"a","name":"z"}]}`, `{"items":[{"name":"x"},{"id":"0","name":"y"}]}`,
		`{"name":1,"items":[]}`, `{"name":"\u202e","items":[{}]}`, `{"items":null}`, `{}`, `[]`, ``, `{"items":[`,
		"{\"name\":\"a\xffb\",\"items\":[{\"brand\":\"b\"}]}", `{"items":[{"gtin":"abc"},{"year":1e3}],"x":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		_, items, err := decodeWatchBody(body)
		if err != nil {
			e, ok := err.(*rappel.Error)
			if !ok || e.Code != rappel.EINVALID || len(e.Items) == 0 || len(e.Items) > maxWatchProblems {
				t.Fatalf("refusal %v is not a 422 with items", err)
			}
			for _, it := range e.Items {
				loc, _ := json.Marshal(it.Loc)
				if !sentence.MatchString(it.Msg) || !strings.HasPrefix(string(loc), `["body"`) {
					t.Fatalf("item %s %q is not a sentence at the body", loc, it.Msg)
				}
			}
			return
		}
		ids := map[string]bool{}
		for _, it := range items {
			if ids[it.ID] || it.ID == "" {
				t.Fatalf("accepted an item without an id of its own: %+v", it)
			}
			ids[it.ID] = true
			if it.GTIN == "" && it.Brand == "" && it.Name == "" && it.Model == "" {
				t.Fatalf("accepted an item with nothing to match on: %+v", it)
			}
		}
		if len(items) == 0 {
			t.Fatal("accepted a list of no item")
		}
	})
}
