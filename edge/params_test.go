package edge

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
)

// searchParams is what a search route will declare.
var searchParams = []string{"q", "recall_type", "limit", "offset", "issued_after", "lang"}

// readSearch reads every search parameter the way a handler does.
type searched struct {
	q, recallType, issuedAfter, lang string
	limit, offset                    int
}

func readSearch(p *params) (searched, error) {
	var s searched
	s.q, _ = p.str("q")
	s.recallType = p.enum("recall_type", rappel.RecallTypes)
	s.limit = p.int("limit", 1, 500, 100)
	s.offset = p.int("offset", 0, 9500, 0)
	s.issuedAfter = p.date("issued_after")
	s.lang = p.enum("lang", rappel.Langs)
	return s, p.err()
}

func TestParams(t *testing.T) {
	tests := []struct {
		query string
		want  searched
		items []string // each item as type@name: msg (msg only when set)
	}{
		{query: "", want: searched{limit: 100}},
		{query: "q=cheddar+cheese&recall_type=food&limit=20&offset=40&issued_after=2024-02-29&lang=fr",
			want: searched{q: "cheddar cheese", recallType: "food", limit: 20, offset: 40, issuedAfter: "2024-02-29", lang: "fr"}},
		{query: "q=caf%C3%A9&&limit=+7", want: searched{q: "café", limit: 7}},
		{query: "q=", want: searched{limit: 100}},
		{query: "recal_type=food", want: searched{limit: 100},
			items: []string{"extra_forbidden@recal_type: Query parameter 'recal_type' is unknown; did you mean 'recall_type'?"}},
		{query: "sort=date", want: searched{limit: 100},
			items: []string{"extra_forbidden@sort: Query parameter 'sort' is unknown; use 'q', 'recall_type', 'limit', 'offset', 'issued_after' or 'lang'."}},
		{query: "limit=1&limit=2&limit=3", want: searched{limit: 100},
			items: []string{"value_error@limit: Query parameter 'limit' was given 3 times; give it once."}},
		{query: "recall_type=fod", want: searched{limit: 100},
			items: []string{"enum@recall_type: Query parameter 'recall_type' should be 'food', 'vehicle', 'health_product', 'consumer_product', 'medical_device' or 'cannabis', not 'fod'; did you mean 'food'?"}},
		{query: "limit=abc", want: searched{limit: 100},
			items: []string{"int_parsing@limit: Query parameter 'limit' should be a whole number, not 'abc'."}},
		{query: "limit=0", want: searched{limit: 100},
			items: []string{"greater_than_equal@limit: Query parameter 'limit' should be at least 1, not '0'."}},
		{query: "limit=501", want: searched{limit: 100},
			items: []string{"less_than_equal@limit: Query parameter 'limit' should be at most 500, not '501'."}},
		{query: "offset=99999999999999999999999", want: searched{limit: 100}, items: []string{"less_than_equal@offset"}},
		{query: "offset=-99999999999999999999999", want: searched{limit: 100}, items: []string{"greater_than_equal@offset"}},
		{query: "issued_after=2023-02-29", want: searched{limit: 100},
			items: []string{"date_from_datetime_parsing@issued_after: Query parameter 'issued_after' should be a date written YYYY-MM-DD, not '2023-02-29': there is no such day."}},
		{query: "issued_after=yesterday", want: searched{limit: 100},
			items: []string{"date_from_datetime_parsing@issued_after: Query parameter 'issued_after' should be a date written YYYY-MM-DD, not 'yesterday': it is not written YYYY-MM-DD."}},
		{query: "recal_type=x&limit=0&limit=1&lang=de&issued_after=2024-1-1&offset=-1&zz=1&zz=2",
			want: searched{limit: 100},
			items: []string{"extra_forbidden@recal_type", "value_error@limit", "extra_forbidden@zz",
				"greater_than_equal@offset", "date_from_datetime_parsing@issued_after", "enum@lang"}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			p, err := parseParams(tt.query, searchParams)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readSearch(&p)
			if got != tt.want {
				t.Errorf("read %+v, want %+v", got, tt.want)
			}
			if len(tt.items) == 0 {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			var e *rappel.Error
			if !errors.As(err, &e) || e.Code != rappel.EINVALID {
				t.Fatalf("error %v, want a 422", err)
			}
			if len(e.Items) != len(tt.items) {
				t.Fatalf("%d items, want %d: %+v", len(e.Items), len(tt.items), e.Items)
			}
			for i, it := range e.Items {
				got := it.Type + "@" + it.Loc[1].(string) + ": " + it.Msg
				if !strings.HasPrefix(got, tt.items[i]) || it.Loc[0] != "query" {
					t.Errorf("item %d: %s, want %s", i, got, tt.items[i])
				}
				if _, err := json.Marshal(it); err != nil {
					t.Errorf("item %d does not encode: %v", i, err)
				}
			}
		})
	}
}

func TestParams_Ctx(t *testing.T) {
	p, _ := parseParams("limit=0&lang=EN", searchParams)
	_, err := readSearch(&p)
	b, _ := json.Marshal(err.(*rappel.Error).Items)
	for _, want := range []string{`"ctx":{"ge":1}`, `"ctx":{"expected":"'en' or 'fr'","suggestion":"en"}`, `"input":"EN"`, `"input":"0"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
}

func TestParams_Required(t *testing.T) {
	p, _ := parseParams("upc=&x=1", []string{"upc", "vin"})
	if v := p.required("upc"); v != "" {
		t.Fatalf("upc = %q", v)
	}
	p.required("vin")
	err := p.err().(*rappel.Error)
	if len(err.Items) != 2 || err.Items[0].Type != "extra_forbidden" || err.Items[1].Type != "missing" || err.Items[1].Loc[1] != "vin" {
		t.Fatalf("items %+v", err.Items)
	}
}

func TestParams_ErrBadRequest(t *testing.T) {
	for _, q := range []string{"lang=%zz", "%G0=1", "lang=en;q=x", strings.Repeat("q=1&", maxParams+1)} {
		if _, err := parseParams(q, searchParams); rappel.ErrorCode(err) != rappel.EBADREQUEST {
			t.Errorf("%.40s: got %v, want a 400", q, err)
		}
	}
}

func TestParams_Undeclared(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("reading an undeclared parameter did not panic")
		}
	}()
	p, _ := parseParams("", []string{"lang"})
	p.str("limit")
}
