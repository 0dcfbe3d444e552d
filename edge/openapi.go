package edge

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/jsonstr"
)

// openAPIDoc is the API's OpenAPI 3.1 description, written by hand next to
// the routes table. A test holds the two together: every route and query
// parameter of the table is in the document and every one of the document
// is in the table, and the handlers' responses match its schemas.
//
//go:embed openapi.json
var openAPIDoc []byte

// openAPIInfo is the document's info object, which the docs page shows.
var openAPIInfo = func() (info struct{ Title, Version string }) {
	var doc struct {
		Info struct {
			Title   string `json:"title"`
			Version string `json:"version"`
		} `json:"info"`
	}
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		// The document is part of the source; a test parses it too.
		panic("edge: openapi.json is not JSON: " + err.Error())
	}
	info.Title, info.Version = doc.Info.Title, doc.Info.Version
	return info
}()

// APIVersion is the API's version, the document's info.version
// (docs/api.md, "Versioning and deprecation"): `rappel version` and GET
// /health report it. The document is its one home.
var APIVersion = openAPIInfo.Version

// openAPI answers GET /openapi.json with the API description, as
// application/json: clients and tools expect that over the registered
// application/vnd.oai.openapi+json, and it is what the description says.
func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) error {
	if err := paramsOf(w).err(); err != nil {
		return err
	}
	// The same for every caller, and changed only with the binary or the
	// agencies plugins register: shared caches may keep it, and its ETag
	// (a hash of the body) moves with it.
	setCachePublic(w)
	writeJSON(w, r, http.StatusOK, servedOpenAPI())
	return nil
}

// servedDoc is the document as served for one set of known agencies.
type servedDoc struct {
	agencies []rappel.Agency
	body     []byte
}

// servedOpenAPICache holds the document last served, rebuilt only when
// the agencies change (docs/api.md, "API description: /openapi.json and /docs").
var servedOpenAPICache atomic.Pointer[servedDoc]

// servedOpenAPI returns the document GET /openapi.json serves: the
// embedded one, with the Agency schema naming every known agency. With
// the spec's three alone it is the embedded document, byte for byte.
func servedOpenAPI() []byte {
	list := rappel.AllAgencies()
	if d := servedOpenAPICache.Load(); d != nil && slices.Equal(d.agencies, list) {
		return d.body
	}
	d := &servedDoc{agencies: list, body: withAgencySchema(list)}
	servedOpenAPICache.Store(d)
	return d.body
}

// agencySchemaKey starts the Agency schema's line in openapi.json, which
// holds the schema on that one line (a test checks it is what
// agencySchema writes for the spec's agencies).
const agencySchemaKey = `"Agency": `

// agencySchemaSpan is where the Agency schema object is in openAPIDoc: from
// after agencySchemaKey to the end of its line, without the comma. It is
// found at start-up, so that a document without it stops the binary, not a
// request.
var agencySchemaSpan = func() (span [2]int) {
	line := []byte("\n      " + agencySchemaKey)
	i := bytes.Index(openAPIDoc, line)
	if i < 0 {
		// The document is part of the source; a test serves it.
		panic("edge: openapi.json has no Agency schema on a line of its own")
	}
	start := i + len(line)
	end := start + bytes.IndexByte(openAPIDoc[start:], '\n')
	if openAPIDoc[end-1] == ',' {
		end--
	}
	return [2]int{start, end}
}()

// withAgencySchema returns openAPIDoc with the Agency schema written for
// list. Only that object is replaced, as text: decoding and encoding the
// whole document would reorder its keys, which people read in the file's
// order.
func withAgencySchema(list []rappel.Agency) []byte {
	start, end := agencySchemaSpan[0], agencySchemaSpan[1]
	out := make([]byte, 0, len(openAPIDoc)+128*len(list))
	out = append(out, openAPIDoc[:start]...)
	out = agencySchema(out, list)
	return append(out, openAPIDoc[end:]...)
}

// agencySchema appends the Agency schema for list: the names as the enum,
// and each agency's full names in English and French twice, in the
// description that documentation pages show and in x-enum-descriptions,
// one per enum value, which client generators turn into the constants'
// comments (and the others ignore, as OpenAPI lets them).
func agencySchema(dst []byte, list []rappel.Agency) []byte {
	names, full, described := make([]string, len(list)), make([]string, len(list)), make([]string, len(list))
	for i, a := range list {
		names[i], full[i] = a.Name, a.EN+" / "+a.FR
		described[i] = "`" + a.Name + "` (" + full[i] + ")"
	}
	dst = append(dst, `{"type": "string", "description": `...)
	dst = jsonstr.Append(dst, "Issuing agency, named in English / French: "+strings.Join(described, ", ")+
		". An agency a source plugin's manifest names is accepted like the spec's three, and listed here while the node knows it.")
	dst = append(dst, `, "enum": `...)
	dst = appendJSONStrings(dst, names)
	dst = append(dst, `, "x-enum-descriptions": `...)
	dst = appendJSONStrings(dst, full)
	return append(dst, '}')
}

// appendJSONStrings appends list as a JSON array on one line, as
// openapi.json writes short arrays.
func appendJSONStrings(dst []byte, list []string) []byte {
	dst = append(dst, '[')
	for i, v := range list {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = jsonstr.Append(dst, v)
	}
	return append(dst, ']')
}
