package edge

import (
	"net/http"

	"github.com/rappel-ca/rappel"
)

// getRecord answers GET /recall/{record_id}[?lang=en|fr] with the bytes the
// snapshot encoded for that record and language: no encoding per request.
func (s *Server) getRecord(w http.ResponseWriter, r *http.Request) error {
	p := paramsOf(w)
	lang := p.enum("lang", rappel.Langs)
	if err := p.err(); err != nil {
		return err
	}
	id := r.PathValue("record_id")
	b, ok := s.Catalog.Snapshot().RecordJSON(id, lang)
	if !ok {
		return rappel.Errorf(rappel.ENOTFOUND,
			"No recall has record_id %s; find record ids with GET /recall.", rappel.Quote(id))
	}
	writeJSON(w, r, http.StatusOK, b)
	return nil
}
