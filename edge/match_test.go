package edge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/match"
)

// TestMatch screens items against lookupRecords through the router and a
// real Pebble store: each kind of evidence gives its status, the answer
// names the dataset's time and never calls an item safe, ids are echoed,
// and an item that cannot be read gets its own 422 while the others are
// answered.
func TestMatch(t *testing.T) {
	e := mustLookupEnv(t, append(lookupRecords(), statsRecords(50, 3)...))
	spaced := cheddarUPC[:1] + " " + cheddarUPC[1:6] + " " + cheddarUPC[6:11] + " " + cheddarUPC[11:]
	body := `{"items":[
		{"id":"lot-in","gtin":"` + cheddarUPC + `","brand":"Laiterie Charlevoix","name":"Aged cheddar 200 g","lot":"BB 2026 DE 15"},
		{"id":"no-lot","gtin":"` + spaced + `","brand":"Laiterie Charlevoix"},
		{"id":"gift","gtin":"00` + cheddarUPC + `","brand":"Fromagerie du Lac","name":"Cheese gift box","lot":"BB 2026 DE 15"},
		{"id":"camry","brand":"Toyota","model":"Camry","year":2011},
		{"id":"camry-2004","brand":"TOYOTA","model":"camry","year":2004},
		{"id":"camry-noyear","brand":"Toyota","model":"Camry"},
		{"id":"words","brand":"Desert Sun","name":"Pitted dates 500 g"},
		{"id":"other-brand","brand":"Sunny Farms","name":"Aged cheddar 200 g"},
		{"id":42,"gtin":"0 12345 67890 5","name":"Nothing like it"},
		{"id":"bad-gtin","gtin":"` + cheddarUPC[:11] + strconv.Itoa((int(cheddarUPC[11]-'0')+1)%10) + `"},
		"not an object",
		{"id":"bad-fields","colour":"red","year":1700,"lang":"EN","name":17},
		{"id":"lot-only","lot":"BB 2026 DE 15"},
		{"id":"two-dates","name":"Aged cheddar","best_before":"2026-12-15","date":"2026-12-01"}
	]}`
	code, b := e.match(t, []byte(body))
	if code != http.StatusOK {
		t.Fatalf("POST /recall/match: %d %s", code, b)
	}
	var a matchAnswerBody
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	if want := lookupNow.UTC().Format(time.RFC3339); a.AsOf != want || a.Count != 14 || len(a.Items) != 14 {
		t.Fatalf("as_of %q (want %q), count %d, %d items", a.AsOf, want, a.Count, len(a.Items))
	}
	byID := map[string]int{}
	for i, it := range a.Items {
		if it.Index != i {
			t.Errorf("item %d has index %d", i, it.Index)
		}
		var id any
		_ = json.Unmarshal(it.ID, &id)
		byID[fmt.Sprint(id)] = i
	}
	check := func(id, status, record, evidence string) *match.Candidate {
		t.Helper()
		i, ok := byID[id]
		if !ok {
			t.Fatalf("no answer with id %s", id)
		}
		if got := a.status(i); got != status {
			t.Errorf("%s: status %s, want %s: %+v", id, got, status, a.Items[i].Candidates)
		}
		if record == "" {
			return nil
		}
		c := a.Items[i].Candidates
		if len(c) == 0 || c[0].RecordID != record || c[0].Evidence != evidence {
			t.Errorf("%s: candidates %+v, want %s (%s) first", id, c, record, evidence)
			return nil
		}
		return &c[0]
	}
	if c := check("lot-in", match.StatusRecalled, "hc-990101", "gtin"); c != nil {
		if c.Applicability.Verdict != match.Covered || c.Product != "Aged cheddar" || !holdsAll(c.Matched, "gtin", "brand", "lot") {
			t.Errorf("lot-in: %+v", c)
		}
	}
	if a.Items[byID["lot-in"]].GTIN != "00"+cheddarUPC {
		t.Errorf("lot-in: gtin %q, want the GTIN-14", a.Items[byID["lot-in"]].GTIN)
	}
	if c := check("no-lot", match.StatusCheckLot, "hc-990101", "gtin"); c != nil && c.Applicability.Verdict != match.Undecided {
		t.Errorf("no-lot: applicability %+v", c.Applicability)
	}
	// The barcode names three notices; the gift box's brand is none of the
	// cheddar's, and the cheddar's notices are not the gift box's.
	if c := check("gift", match.StatusCheckLot, "hc-990103", "gtin"); c != nil {
		for _, o := range a.Items[byID["gift"]].Candidates[1:] {
			if o.Status == match.StatusRecalled || o.Evidence != "gtin_other_brand" {
				t.Errorf("gift: another brand's notice %s is %s (%s)", o.RecordID, o.Status, o.Evidence)
			}
		}
	}
	if c := check("camry", match.StatusRecalled, "tc-2026901", "vehicle"); c != nil && c.Applicability.Verdict != match.Covered {
		t.Errorf("camry: %+v", c.Applicability)
	}
	check("camry-2004", match.StatusNoMatch, "", "")
	other := false
	for _, c := range a.Items[byID["camry-2004"]].Candidates {
		other = other || c.RecordID == "tc-2026901" && c.Applicability.Verdict == match.NotCovered && c.Confidence == 0 &&
			strings.Contains(c.Applicability.Why, "2010–2011, not 2004")
	}
	if !other {
		t.Errorf("camry-2004: candidates %+v, want tc-2026901 naming the model for other years", a.Items[byID["camry-2004"]].Candidates)
	}
	check("camry-noyear", match.StatusCheckLot, "", "vehicle_no_year")
	check("words", match.StatusPossible, "hc-990104", "brand_name")
	check("other-brand", match.StatusNoMatch, "", "")
	check("42", match.StatusNoMatch, "", "")
	for _, id := range []string{"other-brand", "42"} {
		it := a.Items[byID[id]]
		if len(it.Candidates) != 0 || !strings.Contains(it.Message, "as of "+a.AsOf) {
			t.Errorf("%s: candidates %+v, message %q; want none, and the dataset's time", id, it.Candidates, it.Message)
		}
	}
	if string(a.Items[byID["42"]].ID) != "42" {
		t.Errorf("a number id is echoed as %s", a.Items[byID["42"]].ID)
	}

	// Items that cannot be read: each its own 422, every problem at once.
	invalid := func(i int, want ...string) {
		t.Helper()
		it := a.Items[i]
		if a.status(i) != "422" || len(it.Candidates) != 0 {
			t.Errorf("item %d: status %s, candidates %v; want 422", i, a.status(i), it.Candidates)
			return
		}
		var locs []string
		for _, d := range it.Detail {
			b, _ := json.Marshal(d["loc"])
			locs = append(locs, string(b))
			msg, _ := d["msg"].(string)
			if !strings.HasPrefix(msg, "Body field 'items.") || !sentence.MatchString(msg) {
				t.Errorf("item %d: %q is not a sentence about its field", i, msg)
			}
		}
		if strings.Join(locs, " ") != strings.Join(want, " ") {
			t.Errorf("item %d: problems at %v, want %v: %+v", i, locs, want, it.Detail)
		}
	}
	invalid(byID["bad-gtin"], `["body","items",9,"gtin"]`)
	if d := a.Items[byID["bad-gtin"]].Detail; len(d) == 1 && !strings.Contains(d[0]["msg"].(string), "the code is '"+cheddarUPC+"'") {
		t.Errorf("bad-gtin: %q does not give the right code", d[0]["msg"])
	}
	invalid(10, `["body","items",10]`)
	invalid(byID["bad-fields"], `["body","items",11,"colour"]`, `["body","items",11,"lang"]`, `["body","items",11,"name"]`, `["body","items",11,"year"]`)
	invalid(byID["lot-only"], `["body","items",12]`)
	invalid(byID["two-dates"], `["body","items",13,"date"]`)

	counts := map[string]int{"recalled": 2, "check_lot": 3, "possible": 1, "no_match": 3, "invalid": 5}
	for k, v := range counts {
		if a.Counts[k] != v {
			t.Errorf("counts[%s] = %d, want %d (%v)", k, a.Counts[k], v, a.Counts)
		}
	}
	// What the answer says is about the dataset, never that an item is
	// safe.
	if regexp.MustCompile(`(?i)\bsafe`).Match(b) {
		t.Errorf("the answer calls something safe: %s", b)
	}
}

// holdsAll reports whether got holds every one of want.
func holdsAll(got []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			return false
		}
	}
	return true
}

// sentence is a message: a capital first, a period or question mark last.
var sentence = regexp.MustCompile(`^[A-Z].*[.?]$`)

// TestMatch_Body checks the refusals of a body POST /recall/match cannot
// screen: each a 422 (or 415) with a sentence saying what to send.
func TestMatch_Body(t *testing.T) {
	e := mustLookupEnv(t, lookupRecords())
	items := func(n int) string {
		var b strings.Builder
		b.WriteString(`{"items":[`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"name":"aged cheddar"}`)
		}
		b.WriteString(`]}`)
		return b.String()
	}
	for _, c := range []struct {
		name, body, loc, want string
	}{
		{"empty", ``, `["body"]`, "The body is empty"},
		{"not JSON", `{"items":[`, `["body"]`, "is not valid JSON"},
		{"an array", `[{"name":"cheddar"}]`, `["body"]`, "is not a JSON object"},
		{"no items", `{}`, `["body","items"]`, "is required"},
		{"items null", `{"items":null}`, `["body","items"]`, "is required"},
		{"items not an array", `{"items":{"name":"cheddar"}}`, `["body","items"]`, "is not an array"},
		{"no item", `{"items":[]}`, `["body","items"]`, "holds no item"},
		{"too many", items(maxMatchItems + 1), `["body","items"]`, "holds 1001 items, more than the 1000 a request may hold; send the catalog in batches"},
		{"unknown field", `{"items":[{"name":"cheddar"}],"lang":"fr"}`, `["body","lang"]`, "is unknown"},
		{"too long", `{"items":[{"name":"` + strings.Repeat("a", maxMatchBody) + `"}]}`, `["body"]`, "is longer than 1048576 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, b := e.match(t, []byte(c.body))
			var body struct {
				Detail []struct {
					Loc []any  `json:"loc"`
					Msg string `json:"msg"`
				} `json:"detail"`
			}
			if err := json.Unmarshal(b, &body); err != nil || code != http.StatusUnprocessableEntity || len(body.Detail) != 1 {
				t.Fatalf("%d %.300s, want one 422 item", code, b)
			}
			loc, _ := json.Marshal(body.Detail[0].Loc)
			if string(loc) != c.loc || !strings.Contains(body.Detail[0].Msg, c.want) || !sentence.MatchString(body.Detail[0].Msg) {
				t.Errorf("item at %s: %q; want at %s a sentence with %q", loc, body.Detail[0].Msg, c.loc, c.want)
			}
		})
	}
	if code, _ := e.match(t, []byte(items(maxMatchItems))); code != http.StatusOK {
		t.Errorf("%d items: %d, want 200", maxMatchItems, code)
	}
	r := httptest.NewRequest(http.MethodPost, "/recall/match", strings.NewReader(`items=1`))
	r.Header.Set("X-Gateway-Key", testKey)
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, r)
	if w.Code != http.StatusUnsupportedMediaType {
		t.Errorf("a form: %d, want 415", w.Code)
	}
	r = httptest.NewRequest(http.MethodPost, "/recall/match?lang=fr", strings.NewReader(items(1)))
	r.Header.Set("X-Gateway-Key", testKey)
	w = httptest.NewRecorder()
	e.h.ServeHTTP(w, r)
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(w.Body.String(), `"extra_forbidden"`) {
		t.Errorf("a query parameter: %d %.200s, want 422", w.Code, w.Body)
	}
	r = httptest.NewRequest(http.MethodGet, "/recall/match", nil)
	r.Header.Set("X-Gateway-Key", testKey)
	w = httptest.NewRecorder()
	e.h.ServeHTTP(w, r)
	if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "POST" {
		t.Errorf("GET: %d, Allow %q; want 405 and POST", w.Code, w.Header().Get("Allow"))
	}

	// A node without a store cannot look barcodes up.
	e.srv.Lookup = nil
	if code, b := e.match(t, []byte(items(1))); code != http.StatusServiceUnavailable || !bytes.Contains(b, []byte("no store")) {
		t.Errorf("without a store: %d %s, want 503", code, b)
	}
}

// TestMatch_Priced checks that a batch is priced from its items' work and
// charged like a search: its Search-Cost, taken from the key's bucket and
// quota, grows with the items, and a batch costing more than the bucket
// holds is a 429 naming its cost, which takes nothing.
func TestMatch_Priced(t *testing.T) {
	e := mustLookupEnv(t, append(lookupRecords(), statsRecords(200, 4)...))
	e.srv.Keys = planKeys{"rk_small": "small"}
	e.srv.Plans = map[string]rappel.Plan{"small": {Name: "small", Rate: 0.001, Burst: 200, Monthly: 10_000}}
	e.h = e.srv.Handler()
	post := func(n int) (int, http.Header, string) {
		var its []map[string]any
		for i := range n {
			its = append(its, map[string]any{"gtin": cheddarUPC, "brand": "Laiterie Charlevoix", "name": fmt.Sprintf("aged cheddar %d", i)})
		}
		b, _ := json.Marshal(map[string]any{"items": its})
		r := httptest.NewRequest(http.MethodPost, "/recall/match", bytes.NewReader(b))
		r.Header.Set("X-Gateway-Key", "rk_small")
		w := httptest.NewRecorder()
		e.h.ServeHTTP(w, r)
		return w.Code, w.Header(), w.Body.String()
	}
	left := func(h http.Header) int {
		m := regexp.MustCompile(`"burst";r=(\d+)`).FindStringSubmatch(h.Get("RateLimit"))
		if m == nil {
			t.Fatalf("RateLimit %q has no burst", h.Get("RateLimit"))
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	code, h, body := post(1)
	if one, _ := strconv.Atoi(h.Get(headerSearchCost)); code != http.StatusOK || one != 1 || left(h) != 199 {
		t.Fatalf("one item: %d, Search-Cost %q, RateLimit %q: %.200s", code, h.Get(headerSearchCost), h.Get("RateLimit"), body)
	}
	before := 199
	for range 10 {
		code, h, body = post(maxMatchItems)
		cost, _ := strconv.Atoi(h.Get(headerSearchCost))
		if code == http.StatusTooManyRequests {
			if !strings.Contains(body, "this batch costs "+strconv.Itoa(cost)+" units") || !strings.Contains(body, "send fewer items") || h.Get("Retry-After") == "" {
				t.Errorf("over the bucket: %d %s, Retry-After %q; want a 429 naming the batch's cost", code, body, h.Get("Retry-After"))
			}
			// The refused batch took its request's unit only.
			if code, h, _ := post(1); code != http.StatusOK || left(h) != before-2 {
				t.Errorf("after the 429: %d, %d left; want 200 and %d", code, left(h), before-2)
			}
			return
		}
		if code != http.StatusOK || cost < 20 || left(h) != before-cost {
			t.Fatalf("%d items: %d, Search-Cost %d, %d left of %d; want 200, 20 units or more taken", maxMatchItems, code, cost, left(h), before)
		}
		before = left(h)
	}
	t.Errorf("ten batches of %d items were not limited", maxMatchItems)
}

// FuzzMatchBody decodes arbitrary bodies of POST /recall/match: it never
// panics; a refused body is a 422 whose items are sentences at the body's
// place; an accepted one has an entry per item, each either read (its
// texts within bounds, its barcode a GTIN-14 with a valid check digit, its
// year in range, something to match on) or holding problems that are
// sentences at that item's place.
func FuzzMatchBody(f *testing.F) {
	for _, s := range []string{
		`{"items":[{"id":"sku-1","gtin":"0 42272 90583 6","brand":"Amy's","name":"Lentil soup","lot":"60D0924","best_before":"2027-04-30"}]}`,
		`{"items":[{"id":7,"brand":"Honda","model":"Ridgeline","year":2018},{"name":"x","year":"2019"},{"year":1e3}]}`,
		`{"items":[{"gtin":"42272905836*"},{"gtin":"abc"},{"gtin":"0 42272 90583 7"},{"gtin":""}]}`,
		`{"items":["x",null,1,[],{}]}`, `{"items":{}}`, `{"items":null}`, `{}`, `[]`, ``, `{"items":[`,
		"{\"items\":[{\"name\":\"a\xffb\"}]}", `{"items":[{"name":"\ud800"}]}`, `{"items":[{"name":"a\u0000b","lang":"EN","colour":1}]}`,
		`{"items":[{"best_before":"2026-01-01","date":"2026-01-02","name":"x"}]}`, `{"items":[{"id":{"a":1},"name":"x"}]}`,
		`{"items":[{"name":"` + strings.Repeat("a", 300) + `"}],"extra":true}`,
	} {
		f.Add([]byte(s))
	}
	sentences := func(t *testing.T, items []rappel.Invalid, place string) {
		for _, it := range items {
			loc, _ := json.Marshal(it.Loc)
			if !sentence.MatchString(it.Msg) || !strings.HasPrefix(string(loc), place) || !rappel.ItemTypes.Has(it.Type) {
				t.Fatalf("item %s %q (%s) is not a sentence at %s", loc, it.Msg, it.Type, place)
			}
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := decodeMatchBody(body)
		if err != nil {
			e, ok := err.(*rappel.Error)
			if !ok || e.Code != rappel.EINVALID || len(e.Items) == 0 {
				t.Fatalf("refusal %v is not a 422 with items", err)
			}
			sentences(t, e.Items, `["body"`)
			return
		}
		if len(req.entries) == 0 || len(req.entries) > maxMatchItems {
			t.Fatalf("%d entries accepted", len(req.entries))
		}
		n := 0
		for i, e := range req.entries {
			if e.problems != nil {
				sentences(t, e.problems, fmt.Sprintf(`["body","items",%d`, i))
				continue
			}
			if e.item != n {
				t.Fatalf("entry %d is item %d, want %d", i, e.item, n)
			}
			it := req.items[n]
			n++
			for _, s := range []string{it.Name, it.Brand, it.Model, it.Lot, it.Date, it.Category} {
				if len(s) > maxItemText || s != strings.TrimSpace(s) {
					t.Fatalf("entry %d: text %q accepted", i, s)
				}
				if _, bad := rappel.BadChar(s, false); bad {
					t.Fatalf("entry %d: text %q with a bad character accepted", i, s)
				}
			}
			if it.GTIN != "" {
				if g, err := rappel.ParseGTIN(string(it.GTIN)); err != nil || g != it.GTIN || e.gtin != it.GTIN {
					t.Fatalf("entry %d: barcode %q accepted", i, it.GTIN)
				}
			}
			if it.Year != 0 && (it.Year < minModelYear || it.Year > maxModelYear) {
				t.Fatalf("entry %d: year %d accepted", i, it.Year)
			}
			if it.GTIN == "" && it.Name == "" && it.Brand == "" && it.Model == "" {
				t.Fatalf("entry %d: nothing to match on accepted", i)
			}
			if it.Lang != "" && it.Lang != rappel.LangEN && it.Lang != rappel.LangFR {
				t.Fatalf("entry %d: lang %q accepted", i, it.Lang)
			}
			if e.id != nil && !json.Valid(e.id) {
				t.Fatalf("entry %d: id %q is not JSON", i, e.id)
			}
		}
		if n != len(req.items) {
			t.Fatalf("%d items, %d entries read", len(req.items), n)
		}
	})
}
