package rappel

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestInvalid_Constructors(t *testing.T) {
	long := strings.Repeat("x", 300)
	for _, tc := range []struct {
		name string
		it   Invalid
		typ  string
		msg  string
		ctx  string // the ctx as JSON, "" for none
	}{
		{"Missing", InvalidMissing(QueryLoc("upc"), "send the barcode"), ItemMissing,
			"Query parameter 'upc' is required; send the barcode.", ""},
		{"ExtraNear", InvalidExtra(QueryLoc("lnag"), "en", []string{"lang"}), ItemExtra,
			"Query parameter 'lnag' is unknown; did you mean 'lang'?", ""},
		{"ExtraFar", InvalidExtra(BodyLoc("zzz"), nil, []string{"email", "q"}), ItemExtra,
			"Body field 'zzz' is unknown; use 'email' or 'q'.", ""},
		{"ExtraNone", InvalidExtra(QueryLoc("x"), "1", nil), ItemExtra,
			"Query parameter 'x' is unknown; remove it, as this path takes no query parameters.", ""},
		{"Repeated", InvalidRepeated(QueryLoc("lang"), []string{"en", "fr"}), ItemValue,
			"Query parameter 'lang' was given 2 times; give it once.", ""},
		{"EnumNear", InvalidEnum(QueryLoc("lang"), "EN", Langs), ItemEnum,
			"Query parameter 'lang' should be 'en' or 'fr', not 'EN'; did you mean 'en'?", `{"expected":"'en' or 'fr'","suggestion":"en"}`},
		{"EnumFar", InvalidEnum(BodyLoc("lang"), "de", Langs), ItemEnum,
			"Body field 'lang' should be 'en' or 'fr', not 'de'.", `{"expected":"'en' or 'fr'"}`},
		{"EnumOfFar", InvalidEnumOf(QueryLoc("group_by"), "zz", []string{"a1", "b2"}, "a field", ""), ItemEnum,
			"Query parameter 'group_by' should be a field, not 'zz'; use 'a1' or 'b2'.", `{"expected":"'a1' or 'b2'"}`},
		{"EnumOfOne", InvalidEnumOf(QueryLoc("sum_field"), "units_sold", StatsSumFields, "a numeric field", ""), ItemEnum,
			"Query parameter 'sum_field' should be a numeric field, not 'units_sold'; did you mean 'units_affected'?",
			`{"expected":"'units_affected'","suggestion":"units_affected"}`},
		{"EnumOfFix", InvalidEnumOf(QueryLoc("group_by"), "date", []string{"year"}, "a field", "group by 'year'"), ItemEnum,
			"Query parameter 'group_by' should be a field, not 'date'; group by 'year'.", `{"expected":"'year'"}`},
		{"Int", InvalidInt(QueryLoc("limit"), "abc"), ItemInt, "Query parameter 'limit' should be a whole number, not 'abc'.", ""},
		{"Min", InvalidMin(QueryLoc("limit"), "0", 1), ItemTooSmall, "Query parameter 'limit' should be at least 1, not '0'.", `{"ge":1}`},
		{"Max", InvalidMax(QueryLoc("limit"), "501", 500), ItemTooLarge, "Query parameter 'limit' should be at most 500, not '501'.", `{"le":500}`},
		{"DateShape", InvalidDate(QueryLoc("date_to"), "04/01/2024"), ItemDate,
			"Query parameter 'date_to' should be a date written YYYY-MM-DD, not '04/01/2024': it is not written YYYY-MM-DD.",
			`{"error":"it is not written YYYY-MM-DD"}`},
		{"DateDay", InvalidDate(QueryLoc("date_to"), "2023-02-29"), ItemDate,
			"Query parameter 'date_to' should be a date written YYYY-MM-DD, not '2023-02-29': there is no such day.",
			`{"error":"there is no such day"}`},
		{"TooLong", InvalidTooLong(BodyLoc("q"), long, len(long), 256), ItemTooLong,
			"Body field 'q' is 300 bytes long; keep it to 256 bytes or fewer.", `{"max_length":256}`},
		{"TooLongBody", InvalidTooLong(BodyLoc(""), "", -1, 8192), ItemTooLong,
			"The body is longer than 8192 bytes; keep it to 8192 bytes or fewer.", `{"max_length":8192}`},
		{"JSON", InvalidJSON(BodyLoc(""), Reason{Problem: "is empty", Fix: "send a JSON object"}), ItemJSON,
			"The body is empty; send a JSON object.", ""},
		{"Value", InvalidValue(PathLoc("record_id"), "x", Reason{Problem: "is short", Fix: "send more", Suggestion: "xx", Ctx: map[string]any{"n": 1}}), ItemValue,
			"Path parameter 'record_id' is short; send more; did you mean 'xx'?", `{"n":1,"suggestion":"xx"}`},
		{"ValueNoFix", InvalidValue(QueryLoc("vin"), "x", Reason{Problem: "is not a valid VIN: it is short"}), ItemValue,
			"Query parameter 'vin' is not a valid VIN: it is short.", ""},
		{"Unknown", InvalidValue(QueryLoc("category"), "Dary", (&UnknownError{Field: "category", Value: "Dary", Nearest: "dairy", Fix: "list them"}).Reason()), ItemValue,
			"Query parameter 'category' is 'Dary', an unknown category; did you mean 'dairy'?", `{"suggestion":"dairy"}`},
		{"NotUTF8", InvalidExtra(QueryLoc("a\xffb"), "\xfe", nil), ItemExtra,
			"Query parameter 'a\uFFFDb' is unknown; remove it, as this path takes no query parameters.", ""},
		{"Clipped", InvalidEnum(QueryLoc(long), long, Langs), ItemEnum,
			"Query parameter '" + Clip(long) + "' should be 'en' or 'fr', not '" + Clip(long) + "'.", `{"expected":"'en' or 'fr'"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.it.Type != tc.typ || tc.it.Msg != tc.msg {
				t.Errorf("%s: %q\nwant %s: %q", tc.it.Type, tc.it.Msg, tc.typ, tc.msg)
			}
			if s, ok := tc.it.Input.(string); ok && (len(s) > MaxEcho+len("…") || !utf8.ValidString(s)) {
				t.Errorf("input not clipped: %q", s)
			}
			if s, _ := tc.it.Loc[len(tc.it.Loc)-1].(string); len(s) > MaxEcho+len("…") {
				t.Errorf("loc not clipped: %d bytes", len(s))
			}
			ctx := ""
			if tc.it.Ctx != nil {
				b, _ := json.Marshal(tc.it.Ctx)
				ctx = string(b)
			}
			if ctx != tc.ctx {
				t.Errorf("ctx %s, want %s", ctx, tc.ctx)
			}
		})
	}
}

func TestInvalid_Domain(t *testing.T) {
	err := Unknown("category", "Dary", "dairy", "list them")
	if err.Code != EINVALID || err.Message != "Unknown category 'Dary'; did you mean 'dairy'?" {
		t.Errorf("Unknown: %v", err)
	}
	if err := Unknown("indexed field", "zz", "", "use 'type'"); err.Message != "Unknown indexed field 'zz'; use 'type'." {
		t.Errorf("Unknown without a near value: %q", err.Message)
	}
	if err := BadRequest("the query string holds a ';'", "separate parameters with '&'"); err.Code != EBADREQUEST ||
		err.Message != "The query string holds a ';'; separate parameters with '&'." {
		t.Errorf("BadRequest: %v", err)
	}
	for _, tc := range []struct {
		s    Search
		says string
	}{
		{Search{SortBy: SortClosing}, "Query parameter 'sort_by' is 'closing'"},
		{Search{SortBy: SortRelevance}, "send a q"},
		{Search{SortBy: SortValue, Cursor: "c"}, "cannot page a search sorted by 'value'"},
		{Search{Cursor: "c", Offset: 1}, "'cursor' and 'offset' were both given"},
		{Search{Offset: MaxOffset + 1}, "'offset' is above 9500"},
	} {
		if err := tc.s.Check(); ErrorCode(err) != EBADREQUEST || !strings.Contains(ErrorMessage(err), tc.says) {
			t.Errorf("%+v: %v, want a 400 saying %q", tc.s, err, tc.says)
		}
	}
	if err := (&Search{SortBy: SortRelevance, Query: &Query{}, Offset: MaxOffset}).Check(); err != nil {
		t.Errorf("a valid search: %v", err)
	}
}

// TestInvalid_OneHome reads the module's code and checks that client-facing
// validation is worded in invalid.go only: no other file builds an Invalid
// or sets a Loc, makes a 400 but through BadRequest, and the store
// packages build no location in a request at all.
func TestInvalid_OneHome(t *testing.T) {
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules" || path == "build" || path == "bundle/data") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		for _, p := range oneHomeProblems(path, f) {
			t.Errorf("%s: %s", fset.Position(p.pos), p.what)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d files of the module; it has more", files)
	}
}

type homeProblem struct {
	pos  token.Pos
	what string
}

// oneHomeProblems lists where f, at path, words validation itself.
func oneHomeProblems(path string, f *ast.File) []homeProblem {
	if path == "invalid.go" {
		return nil
	}
	var ps []homeProblem
	inStore := path == "kv" || strings.HasPrefix(path, "kv/")
	// name is an identifier of package rappel as this file writes it.
	name := func(e ast.Expr) string {
		switch e := e.(type) {
		case *ast.Ident:
			if f.Name.Name == "rappel" {
				return e.Name
			}
		case *ast.SelectorExpr:
			if x, ok := e.X.(*ast.Ident); ok && x.Name == "rappel" {
				return e.Sel.Name
			}
		}
		return ""
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CompositeLit:
			if name(n.Type) == "Invalid" {
				ps = append(ps, homeProblem{n.Pos(), "an Invalid built outside invalid.go's constructors"})
			}
			for _, el := range n.Elts {
				if kv, ok := el.(*ast.KeyValueExpr); ok {
					if k, ok := kv.Key.(*ast.Ident); ok && (k.Name == "Loc" || k.Name == "Items") {
						ps = append(ps, homeProblem{kv.Pos(), k.Name + " set outside invalid.go"})
					}
				}
			}
		case *ast.Ident:
			if n.Name == "EBADREQUEST" && f.Name.Name == "rappel" && path != "error.go" {
				ps = append(ps, homeProblem{n.Pos(), "a 400 made without BadRequest"})
			}
		}
		if sel, ok := n.(*ast.SelectorExpr); ok {
			switch s := name(sel); {
			case s == "EBADREQUEST" && path != "edge/error.go":
				ps = append(ps, homeProblem{sel.Pos(), "a 400 made without rappel.BadRequest"})
			case inStore && (strings.HasPrefix(s, "Invalid") || strings.HasSuffix(s, "Loc")):
				ps = append(ps, homeProblem{sel.Pos(), "a location in a request built by the store: return a domain error (rappel.Unknown) instead"})
			}
		}
		return true
	})
	return ps
}

// FuzzBadJSONText: whatever bytes come in, BadJSONText does not panic; a
// refusal names a byte or an escape; a JSON string or array of strings it
// passes decodes to text holding no U+FFFD but those it sent as such.
func FuzzBadJSONText(f *testing.F) {
	for _, s := range []string{`"milk"`, "\"milk\xff\"", `"a\ud800"`, `"\udc00b"`, `"\ud83d\ude00"`, `"\ud83d\u0041"`,
		`"\ufffd \uFFFD ` + "\ufffd" + `"`, `["ok","\ud800"]`, `"\\ud800"`, `"\u00e9` + "\xc3(\"", `"\`, `"\u12`, `"` + "\xe2\x82" + `"`} {
		f.Add([]byte(s))
	}
	escapedFFFD := regexp.MustCompile(`(?i)\\ufffd`)
	f.Fuzz(func(t *testing.T, raw []byte) {
		why, bad := BadJSONText(raw)
		if bad {
			if !strings.HasPrefix(why.Problem, "holds the byte 0x") && !strings.HasPrefix(why.Problem, "holds the escape '\\u") {
				t.Fatalf("%q: reason %+v", raw, why)
			}
			return
		}
		var v any
		sent := escapedFFFD.ReplaceAll(bytes.ReplaceAll(raw, []byte("\ufffd"), nil), nil)
		if json.Unmarshal(sent, &v) != nil {
			return
		}
		texts, _ := v.([]any)
		if s, ok := v.(string); ok {
			texts = []any{s}
		}
		for _, x := range texts {
			if s, ok := x.(string); ok && strings.ContainsRune(s, utf8.RuneError) {
				t.Fatalf("%q passed, and decodes to %q", raw, s)
			}
		}
	})
}
