package jsonx

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
)

// FuzzUnmarshal feeds arbitrary bytes to sonic and to encoding/json as a
// record: whatever sonic accepts, encoding/json must accept with the same
// value, strictly or not; Unmarshal and UnmarshalStrict must answer as
// encoding/json does; and the value must encode to the same bytes.
func FuzzUnmarshal(f *testing.F) {
	f.Add([]byte(`{"record_id":"hc-1","recall_id":"1","units_affected":3,"translations":{"en":{"title":"<b>é</b>"},"fr":null},"product_list":[{"name":"a","upc":"0","lot_codes":["x"]}],"affected_models":[{"make":"FORD","model":"F","year":2001}]}`))
	f.Add([]byte("{\"record_id\":\"a\xff\\ud800\\u0000b\",\"Record_ID\":\"c\",\"categories\":null}"))
	f.Add([]byte(`{"record_id":"x","surprise":{"a":[1,2]}} `))
	f.Add([]byte(`{"record_id":"x"} ]`))
	f.Add([]byte(`{"units_affected":1e2,"affected_models":[{"year":"1"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var want, sonicGot, got rappel.Record
		wantErr := json.Unmarshal(data, &want)
		if err := std.Unmarshal(data, &sonicGot); err == nil {
			if wantErr != nil {
				t.Fatalf("sonic accepts what encoding/json refuses (%v): %q", wantErr, data)
			}
			if !reflect.DeepEqual(sonicGot, want) {
				t.Fatalf("%q decodes differently:\nsonic         %+v\nencoding/json %+v", data, sonicGot, want)
			}
		}
		if err := Unmarshal(data, &got); (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Fatalf("Unmarshal(%q): %v, encoding/json: %v", data, err, wantErr)
		}
		if wantErr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("Unmarshal(%q) = %+v, encoding/json %+v", data, got, want)
		}
		if wantErr == nil {
			a, errA := Marshal(&want)
			b, errB := json.Marshal(&want)
			if errA != nil || errB != nil || !bytes.Equal(a, b) {
				t.Fatalf("%+v encodes differently: %s (%v), encoding/json %s (%v)", want, a, errA, b, errB)
			}
		}

		var strictWant, strictSonic, strictGot rappel.Record
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		strictErr := dec.Decode(&strictWant)
		if strictErr == nil && len(bytes.Trim(data[dec.InputOffset():], " \t\r\n")) > 0 {
			strictErr = ErrMoreValues
		}
		if err := strict.Unmarshal(data, &strictSonic); err == nil {
			if strictErr != nil {
				t.Fatalf("sonic accepts strictly what encoding/json refuses (%v): %q", strictErr, data)
			}
			if !reflect.DeepEqual(strictSonic, strictWant) {
				t.Fatalf("%q decodes differently when strict:\nsonic         %+v\nencoding/json %+v", data, strictSonic, strictWant)
			}
		}
		err := UnmarshalStrict(data, &strictGot)
		if (err == nil) != (strictErr == nil) {
			t.Fatalf("UnmarshalStrict(%q): %v, encoding/json: %v", data, err, strictErr)
		}
		if err == nil && !reflect.DeepEqual(strictGot, strictWant) {
			t.Fatalf("UnmarshalStrict(%q) = %+v, encoding/json %+v", data, strictGot, strictWant)
		}
	})
}

// FuzzMarshal puts arbitrary bytes and numbers in a record, and in the
// other kinds of value the store keeps (maps, times, floats, omitzero), and
// requires Marshal to write json.Marshal's bytes.
func FuzzMarshal(f *testing.F) {
	f.Add("hc-1", "<script>&amp;", "a\xff\xed\xa0\x80b", "\u2028\u2029\x00\x1f\x7f\b\f", 7, 1e21, int64(0))
	f.Add("\\u0008", "", "\t\n\r", "\"", -1, 1e-7, int64(1<<62))
	f.Fuzz(func(t *testing.T, id, title, category, upc string, n int, x float64, nanos int64) {
		r := &rappel.Record{
			RecordID: id, Category: category, UnitsAffected: &n, Categories: []string{category, ""},
			Translations: rappel.Translations{FR: &rappel.Translation{Title: title}},
			ProductList:  []rappel.Product{{Name: title, UPC: upc}},
		}
		other := struct {
			M    map[string]string `json:"m"`
			X    float64           `json:"x"`
			At   time.Time         `json:"at,omitzero"`
			Feed rappel.FeedState  `json:"feed"`
		}{M: map[string]string{id: title, category: upc}, X: x, At: time.Unix(0, nanos).UTC(), Feed: rappel.FeedState{Source: id, LastAttempt: time.Unix(0, nanos)}}
		for _, v := range []any{r, &other} {
			a, errA := Marshal(v)
			b, errB := json.Marshal(v)
			if (errA == nil) != (errB == nil) || !bytes.Equal(a, b) {
				t.Fatalf("%+v encodes differently:\nMarshal      %s (%v)\njson.Marshal %s (%v)", v, a, errA, b, errB)
			}
		}
	})
}
