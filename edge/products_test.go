package edge

import (
	"bytes"
	"encoding/json"
	"net/url"
	"testing"
)

func TestProducts(t *testing.T) {
	e := mustLookupEnv(t, lookupRecords())
	body := func(t *testing.T, id string) string {
		t.Helper()
		status, b := e.call(t, "/recall/products?"+url.Values{"id": {id}}.Encode())
		if status != 200 {
			t.Fatalf("id %s: %d %s", id, status, b)
		}
		return string(b)
	}

	t.Run("NewestOfSharedRecallID", func(t *testing.T) {
		// hc-990101 (2026-11-10) and hc-990102 (2026-11-03) share the
		// recall_id; the newer lists two products.
		want := `{"recall_id":"990101","recall_type":"food",` +
			`"product_list":[{"name":"Aged cheddar","upc":"0 62639 31285 5","lot_codes":["BB 2026 DE 15"],"size":"200 g"},` +
			`{"name":"Aged cheddar, family size","upc":"","size":"1 kg"}],` +
			`"affected_models":null,"distribution":["Ontario","Quebec"],"units_affected":null,` +
			`"identification_number":"RA-990101","manufacturer_recall_number":null,"system":null}`
		if got := body(t, "990101"); got != want {
			t.Errorf("got\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("Vehicle", func(t *testing.T) {
		want := `{"recall_id":"2026901","recall_type":"vehicle","product_list":[],` +
			`"affected_models":[{"make":"TOYOTA","model":"CAMRY","year":2010},{"make":"TOYOTA","model":"CAMRY","year":2011}],` +
			`"distribution":null,"units_affected":12000,"identification_number":null,` +
			`"manufacturer_recall_number":null,"system":"Air bags"}`
		if got := body(t, "2026901"); got != want {
			t.Errorf("got\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("Nulls", func(t *testing.T) {
		var got map[string]json.RawMessage
		e.ok(t, "/recall/products?id=990103", &got)
		for key, want := range map[string]string{
			"recall_id": `"990103"`, "recall_type": `"food"`, "affected_models": "null", "distribution": "null",
			"units_affected": "null", "identification_number": "null", "manufacturer_recall_number": "null", "system": "null",
		} {
			if string(got[key]) != want {
				t.Errorf("%s = %s, want %s", key, got[key], want)
			}
		}
		if len(got) != 9 {
			t.Errorf("%d keys, want 9: %v", len(got), got)
		}
	})
	t.Run("SpacesTrimmed", func(t *testing.T) {
		if got, want := body(t, " 2026901 "), body(t, "2026901"); got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		status, b := e.call(t, "/recall/products?id=tc-2026901")
		if status != 404 || !bytes.Contains(b, []byte(`No recall has recall_id 'tc-2026901'; id takes a recall_id (not a record_id)`)) {
			t.Errorf("%d %s", status, b)
		}
	})
	t.Run("Invalid", func(t *testing.T) {
		for query, typ := range map[string]string{
			"":              "missing",
			"id=":           "value_error",
			"id=%20":        "value_error",
			"id=1&id=2":     "value_error",
			"recall_id=990": "extra_forbidden",
		} {
			items := e.invalid(t, "/recall/products?"+query)
			if items[0].Type != typ || items[0].Loc[1] == "" {
				t.Errorf("%q: %+v, want %s", query, items, typ)
			}
		}
	})
}
