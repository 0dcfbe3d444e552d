package edge

import (
	_ "embed"
	"encoding/json"
	"net/http"
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

// openAPI answers GET /openapi.json with the API description, as
// application/json: clients and tools expect that over the registered
// application/vnd.oai.openapi+json, and it is what the description says.
func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) error {
	if err := paramsOf(w).err(); err != nil {
		return err
	}
	// The same for every caller and changed only with the binary: shared
	// caches may keep it.
	setCachePublic(w)
	writeJSON(w, r, http.StatusOK, openAPIDoc)
	return nil
}
