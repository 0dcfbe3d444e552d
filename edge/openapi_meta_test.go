package edge

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The schema openapi.json is held to: the OpenAPI Initiative's JSON Schema
// of OpenAPI 3.1 documents, with Schema Objects held to the OpenAPI
// dialect's keywords. The files are in testdata/openapi, whose README says
// where they come from; the validator finds the JSON Schema 2020-12
// meta-schemas built in, so nothing is fetched.
var (
	metaSchemaDir   = filepath.Join("testdata", "openapi")
	officialSchemas = []string{"oas-3.1-schema.json", "oas-3.1-dialect-base.json", "oas-3.1-meta-base.json"}
)

const officialDocSchema = "https://spec.openapis.org/oas/3.1/schema/2022-10-07"

// mustMetaSchema compiles the schema of OpenAPI documents: with strict,
// testdata/openapi/strict.json, which fails a keyword no vocabulary of the
// dialect defines; without, the official document schema alone, which lets
// any keyword through in a Schema Object.
func mustMetaSchema(tb testing.TB, strict bool) *jsonschema.Schema {
	tb.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	for _, name := range officialSchemas {
		b, err := os.ReadFile(filepath.Join(metaSchemaDir, name))
		if err != nil {
			tb.Fatal(err)
		}
		doc := mustJSONObject(tb, name, b)
		if err := c.AddResource(doc["$id"].(string), doc); err != nil {
			tb.Fatal(err)
		}
	}
	loc := officialDocSchema
	if strict {
		loc = filepath.Join(metaSchemaDir, "strict.json")
	}
	sch, err := c.Compile(loc)
	if err != nil {
		tb.Fatalf("compiling %s: %v", loc, err)
	}
	return sch
}

// TestOpenAPI_MetaSchemaCatchesTypos misspells one keyword at a time in a
// copy of the document and checks that the validation of
// TestOpenAPI_Document fails, naming the place and the misspelling. The
// official schema leaves a Schema Object open to any keyword, so a
// misspelled one there ("maxLenght") would silently stop constraining
// anything: the strict schema catches those too.
func TestOpenAPI_MetaSchemaCatchesTypos(t *testing.T) {
	strict, official := mustMetaSchema(t, true), mustMetaSchema(t, false)
	cases := []struct {
		name, at, from, to string
		// inSchema is true when the keyword is in a Schema Object, where
		// only the strict schema sees the misspelling.
		inSchema bool
	}{
		{"NamedSchema", "/components/schemas/Record", "additionalProperties", "additionalProperty", true},
		{"PropertySchema", "/components/schemas/Record/properties/units_affected", "minimum", "minimun", true},
		{"ParameterSchema", "/components/parameters/Q/schema", "maxLength", "maxLenght", true},
		{"ItemsSchema", "/components/schemas/Record/properties/categories", "items", "item", true},
		{"Operation", "/paths/~1recall/get", "operationId", "operationID", false},
		{"Parameter", "/components/parameters/Token", "required", "requried", false},
		{"Response", "/components/responses/NotFound", "description", "desciption", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := mutated(t, c.at, func(obj map[string]any) {
				v, ok := obj[c.from]
				if !ok {
					t.Fatalf("%s has no %q", c.at, c.from)
				}
				delete(obj, c.from)
				obj[c.to] = v
			})
			err := strict.Validate(doc)
			if err == nil {
				t.Fatalf("%q for %q at %s validates", c.to, c.from, c.at)
			}
			var verr *jsonschema.ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("not a validation error: %v", err)
			}
			if msg := err.Error(); !strings.Contains(msg, "'"+c.at+"/"+c.to+"'") {
				t.Errorf("the error does not point at %s/%s:\n%s", c.at, c.to, msg)
			}
			if err := official.Validate(doc); c.inSchema && err != nil {
				t.Errorf("the official schema alone caught it, so this case tests nothing of strict.json: %v", err)
			} else if !c.inSchema && err == nil {
				t.Errorf("the official schema alone let it through")
			}
		})
	}
	// A Schema Object may still carry an extension, and the keywords of
	// the dialect's vocabularies, OpenAPI's own included.
	for kw, v := range map[string]any{
		"x-rappel-note": "an extension",
		"deprecated":    true,
		"examples":      []any{json.Number("42")},
		"externalDocs":  map[string]any{"url": "https://example.ca/units"},
		"$comment":      "a comment",
	} {
		doc := mutated(t, "/components/schemas/Record/properties/units_affected", func(obj map[string]any) { obj[kw] = v })
		if err := strict.Validate(doc); err != nil {
			t.Errorf("%s in a schema is refused:\n%v", kw, err)
		}
	}
}

// mutated returns a copy of the document whose object at the JSON pointer
// at was changed by change.
func mutated(tb testing.TB, at string, change func(map[string]any)) map[string]any {
	tb.Helper()
	doc := mustJSONObject(tb, "openapi.json", openAPIDoc)
	var v any = doc
	for _, tok := range strings.Split(at[1:], "/") {
		m, _ := v.(map[string]any)
		v = m[strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)]
	}
	obj, ok := v.(map[string]any)
	if !ok {
		tb.Fatalf("no object at %s", at)
	}
	change(obj)
	return doc
}
