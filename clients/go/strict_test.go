package clients

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// answer checks a generated client's answer: no error (the generated code
// decodes the body into its typed field, so a field of another type than
// the document says fails there), the status the call was made for, and,
// when the document gives that status a JSON body, the typed JSON<status>
// field set and every field the document requires present in the body
// (encoding/json leaves a missing one at its zero value without a word).
// Fields the document does not name are accepted: a new field is
// compatible.
func answer[R any](t *testing.T, name string, res *R, err error, want int) *R {
	t.Helper()
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return nil
	}
	v := reflect.ValueOf(res).Elem()
	hr := v.FieldByName("HTTPResponse").Interface().(*http.Response)
	body := v.FieldByName("Body").Bytes()
	if hr.StatusCode != want {
		t.Errorf("%s: status %d, want %d: %.300s", name, hr.StatusCode, want, body)
		return nil
	}
	typed := v.FieldByName(fmt.Sprintf("JSON%d", want))
	if !typed.IsValid() {
		return res
	}
	if typed.IsNil() {
		t.Errorf("%s: status %d has a JSON body in the document, and the client decoded none (Content-Type %q)", name, want, hr.Header.Get("Content-Type"))
		return nil
	}
	var raw any
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Errorf("%s: %v", name, err)
		return nil
	}
	for _, p := range missingRequired(raw, typed.Elem(), "") {
		t.Errorf("%s: the body has no %s, which the document requires: %.300s", name, p, body)
	}
	return res
}

// missingRequired lists the places in the decoded JSON raw where a field
// of the generated type v that the document requires is absent. The
// generator writes a required field's tag without omitempty (optional
// ones are pointers with omitempty), so that is what is looked for; a
// required field that may be null is a pointer without omitempty, and
// must be present too.
func missingRequired(raw any, v reflect.Value, at string) []string {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	var missing []string
	switch v.Kind() {
	case reflect.Struct:
		obj, ok := raw.(map[string]any)
		if !ok {
			return nil
		}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			tag := f.Tag.Get("json")
			name, opts, _ := strings.Cut(tag, ",")
			if !f.IsExported() || name == "-" || name == "" {
				continue
			}
			sub, present := obj[name]
			if !present {
				if !strings.Contains(opts, "omitempty") {
					missing = append(missing, at+"/"+name)
				}
				continue
			}
			missing = append(missing, missingRequired(sub, v.Field(i), at+"/"+name)...)
		}
	case reflect.Slice, reflect.Array:
		arr, ok := raw.([]any)
		if !ok {
			return nil
		}
		for i := 0; i < v.Len() && i < len(arr); i++ {
			missing = append(missing, missingRequired(arr[i], v.Index(i), fmt.Sprintf("%s/%d", at, i))...)
		}
	case reflect.Map:
		obj, ok := raw.(map[string]any)
		if !ok {
			return nil
		}
		for _, k := range v.MapKeys() {
			if k.Kind() == reflect.String {
				missing = append(missing, missingRequired(obj[k.String()], v.MapIndex(k), at+"/"+k.String())...)
			}
		}
	}
	return missing
}

// TestMissingRequired checks the required-field check on a generated-like
// type: an absent required field is named with its place, absent optional
// ones and unknown ones are not.
func TestMissingRequired(t *testing.T) {
	type item struct {
		ID   string  `json:"id"`
		Note *string `json:"note,omitempty"`
		Next *string `json:"next"`
	}
	type page struct {
		Count int    `json:"count"`
		Items []item `json:"items"`
	}
	body := `{"count": 2, "items": [{"id": "a", "next": null, "new": 1}, {"note": "x"}], "extra": true}`
	var p page
	var raw any
	if err := json.Unmarshal([]byte(body), &p); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(body), &raw); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(missingRequired(raw, reflect.ValueOf(&p), ""), " ")
	if want := "/items/1/id /items/1/next"; got != want {
		t.Errorf("missing %q, want %q", got, want)
	}
}
