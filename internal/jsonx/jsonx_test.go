package jsonx

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/rappel-ca/rappel"
)

// bundleDir is the generated bundle of the repository (`make bundle`).
const bundleDir = "../../bundle/data"

// TestBundle_SonicAgrees decodes every line of the bundle's records, partial
// records and raw records with sonic itself (not through the fallback of
// Unmarshal, which would hide a disagreement) and with encoding/json, and
// requires the same value; then encodes each value with both and requires
// the same bytes.
func TestBundle_SonicAgrees(t *testing.T) {
	if _, err := os.Stat(filepath.Join(bundleDir, "manifest.json")); err != nil {
		switch {
		case os.Getenv("RAPPEL_CI") != "":
			t.Fatalf("no bundle (%v), and CI must compare sonic with encoding/json on it: run `make bundle`", err)
		case os.Getenv("RAPPEL_TEST_BUNDLE") != "":
			t.Fatalf("RAPPEL_TEST_BUNDLE is set but there is no bundle: %v", err)
		}
		t.Skip("no bundle in bundle/data; `make test` builds one first and sets RAPPEL_TEST_BUNDLE=1")
	}
	if !Native() {
		t.Skip("sonic's native code does not run in this build: nothing to compare")
	}
	records := []string{"records.ndjson.zst"}
	parts, _ := filepath.Glob(filepath.Join(bundleDir, "_partials", "*.ndjson.zst"))
	raws, _ := filepath.Glob(filepath.Join(bundleDir, "_raw", "*.ndjson.zst"))
	if len(parts) == 0 || len(raws) == 0 {
		t.Fatalf("the bundle has %d partial and %d raw record files, want some of each", len(parts), len(raws))
	}
	for _, p := range parts {
		records = append(records, filepath.Join("_partials", filepath.Base(p)))
	}
	for _, name := range records {
		t.Run(name, func(t *testing.T) {
			n := compareLines[rappel.Record](t, name, true)
			t.Logf("%d records agree", n)
		})
	}
	for _, p := range raws {
		name := filepath.Join("_raw", filepath.Base(p))
		t.Run(name, func(t *testing.T) {
			n := compareLines[rappel.RawRecord](t, name, false)
			t.Logf("%d raw records agree", n)
		})
	}
}

// compareLines checks every line of a bundle file as a T, strictly too
// when strictToo (plugins' output is decoded strictly), and returns the
// number of lines.
func compareLines[T any](t *testing.T, name string, strictToo bool) int {
	n := eachLine(t, name, func(n int, line []byte) {
		var want, got, gotStrict T
		if err := json.Unmarshal(line, &want); err != nil {
			t.Fatalf("line %d: encoding/json: %v", n, err)
		}
		if err := std.Unmarshal(line, &got); err != nil {
			t.Fatalf("line %d: sonic: %v", n, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("line %d decodes differently:\nsonic         %+v\nencoding/json %+v", n, got, want)
		}
		if strictToo {
			if err := strict.Unmarshal(line, &gotStrict); err != nil {
				t.Fatalf("line %d: sonic, strict: %v", n, err)
			}
			if !reflect.DeepEqual(gotStrict, want) {
				t.Fatalf("line %d decodes differently when strict:\nsonic         %+v\nencoding/json %+v", n, gotStrict, want)
			}
		}
		wantJS, err := json.Marshal(&want)
		if err != nil {
			t.Fatal(err)
		}
		gotJS, err := std.Marshal(&want)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(gotJS, wantJS) {
			t.Fatalf("line %d encodes differently:\nsonic         %s\nencoding/json %s", n, gotJS, wantJS)
		}
	})
	if n == 0 {
		t.Fatalf("%s has no lines", name)
	}
	return n
}

// eachLine calls fn with every line of the bundle file name (and its
// number, from 1) and returns the number of lines.
func eachLine(tb testing.TB, name string, fn func(n int, line []byte)) int {
	tb.Helper()
	f, err := os.Open(filepath.Join(bundleDir, name))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := zstd.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	defer zr.Close()
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	n := 0
	for sc.Scan() {
		n++
		fn(n, sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return n
}

// TestUnmarshal checks the inputs where sonic's own defaults differ from
// encoding/json, and that a refused input gets encoding/json's error.
func TestUnmarshal(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     string // record_id
		err      string // part of the error; "" for none
	}{
		{"InvalidUTF8", "{\"record_id\":\"a\xffb\"}", "a\uFFFDb", ""},
		{"LoneSurrogate", `{"record_id":"a\ud800b"}`, "a\uFFFDb", ""},
		{"ControlCharacter", "{\"record_id\":\"a\x01b\"}", "", "invalid character '\\x01' in string literal"},
		{"CaseInsensitiveKey", `{"RECORD_ID":"x"}`, "x", ""},
		{"DuplicateKey", `{"record_id":"x","record_id":"y"}`, "y", ""},
		{"UnknownField", `{"record_id":"x","surprise":1}`, "x", ""},
		{"TypeMismatch", `{"units_affected":1.5}`, "", "cannot unmarshal number 1.5 into Go struct field Record.units_affected of type int"},
		{"Trailing", `{"record_id":"x"} {"record_id":"y"}`, "", "invalid character '{' after top-level value"},
		{"Empty", ``, "", "unexpected end of JSON input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r rappel.Record
			err := Unmarshal([]byte(tc.in), &r)
			checkDecoded(t, &r, err, tc.want, tc.err)
			if tc.err != "" {
				var syn *json.SyntaxError
				var typ *json.UnmarshalTypeError
				if !errors.As(err, &syn) && !errors.As(err, &typ) {
					t.Errorf("error %T is not encoding/json's", err)
				}
			}
		})
	}
}

func TestUnmarshalStrict(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     string // record_id
		err      string // part of the error; "" for none
	}{
		{"OK", `{"record_id":"hc-1","translations":{"en":{"title":"t"}}} ` + "\r\n", "hc-1", ""},
		{"InvalidUTF8", "{\"record_id\":\"a\xffb\"}", "a\uFFFDb", ""},
		{"UnknownField", `{"record_id":"x","surprise":1}`, "", `json: unknown field "surprise"`},
		{"UnknownNestedField", `{"translations":{"en":{"surprise":1}}}`, "", `json: unknown field "surprise"`},
		{"MoreValues", `{"record_id":"x"} {"record_id":"y"}`, "", "more than one JSON value"},
		{"StrayBracket", `{"record_id":"x"} ]`, "", "invalid character ']' after the JSON value"},
		{"Garbage", `not json`, "", "invalid character 'o' in literal null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r rappel.Record
			checkDecoded(t, &r, UnmarshalStrict([]byte(tc.in), &r), tc.want, tc.err)
		})
	}
}

func checkDecoded(t *testing.T, r *rappel.Record, err error, want, wantErr string) {
	t.Helper()
	switch {
	case wantErr == "" && err != nil:
		t.Fatalf("error %v, want record_id %q", err, want)
	case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
		t.Fatalf("error %v, want one saying %q", err, wantErr)
	case wantErr == "" && r.RecordID != want:
		t.Fatalf("record_id %q, want %q", r.RecordID, want)
	}
}

// TestStdDecode checks the fallback itself: encoding/json's value replaces
// whatever v held, and a non-pointer gets encoding/json's error.
func TestStdDecode(t *testing.T) {
	r := rappel.Record{RecordID: "left over", Status: "from a failed decode"}
	if err := stdDecode(&r, func(fresh any) error { return json.Unmarshal([]byte(`{"record_id":"x"}`), fresh) }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r, rappel.Record{RecordID: "x"}) {
		t.Fatalf("decoded %+v, want only record_id x", r)
	}
	var iv *json.InvalidUnmarshalError
	if err := Unmarshal([]byte(`{}`), rappel.Record{}); !errors.As(err, &iv) {
		t.Fatalf("decoding into a non-pointer: %v, want encoding/json's InvalidUnmarshalError", err)
	}
}

func TestMarshal(t *testing.T) {
	r := &rappel.Record{RecordID: "a\xff<&>\u2028", Categories: []string{}, Translations: rappel.Translations{EN: &rappel.Translation{Title: "é"}}}
	got, err := Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(r)
	if !bytes.Equal(got, want) {
		t.Fatalf("Marshal = %s\njson.Marshal = %s", got, want)
	}
}

func TestEscapesDiffer(t *testing.T) {
	for in, want := range map[string]bool{
		`"a\u0008b"`:           true,
		`"\u000c"`:             true,
		`"\u0026\u003c\u003e"`: false,
		`"\u000b\u0000\u001f"`: false,
		`"\\u0008"`:            true, // a backslash before u0008: encoded again, for nothing
		`\u000`:                false,
		``:                     false,
	} {
		if got := escapesDiffer([]byte(in)); got != want {
			t.Errorf("escapesDiffer(%s) = %v, want %v", in, got, want)
		}
	}
}
