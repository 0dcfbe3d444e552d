package edge

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/rappel-ca/rappel"
)

// products is the body of GET /recall/products. Unlike a record, its
// optional keys are always present, null when the record lacks them
// (docs/api.md, "Lookups"); product_list is [] rather than null, since the
// spec gives it no null.
type products struct {
	RecallID                 string                `json:"recall_id"`
	RecallType               string                `json:"recall_type"`
	ProductList              []rappel.Product      `json:"product_list"`
	AffectedModels           []rappel.VehicleModel `json:"affected_models"`
	Distribution             []string              `json:"distribution"`
	UnitsAffected            *int                  `json:"units_affected"`
	IdentificationNumber     *string               `json:"identification_number"`
	ManufacturerRecallNumber *string               `json:"manufacturer_recall_number"`
	System                   *string               `json:"system"`
}

// getProducts answers GET /recall/products?id=<recall_id> with the products
// and affected models of the newest record holding that recall_id.
func (s *Server) getProducts(w http.ResponseWriter, r *http.Request) error {
	p := paramsOf(w)
	id := strings.TrimSpace(p.required("id"))
	if v, ok := p.str("id"); ok && id == "" {
		p.invalid(rappel.InvalidValue(rappel.QueryLoc("id"), v, rappel.Reason{Problem: "is empty", Fix: "give the recall_id of a recall, as GET /recall lists them"}))
	}
	if err := p.err(); err != nil {
		return err
	}
	rec, ok := s.Catalog.Snapshot().NewestByRecallID(id)
	if !ok {
		return rappel.Errorf(rappel.ENOTFOUND,
			"No recall has recall_id %s; id takes a recall_id (not a record_id), as GET /recall lists them.", rappel.Quote(id))
	}
	b, err := json.Marshal(productsOf(rec))
	if err != nil {
		return err
	}
	writeJSON(w, r, http.StatusOK, b)
	return nil
}

// productsOf picks the products body out of a record; empty lists and
// strings become null.
func productsOf(rec *rappel.Record) *products {
	out := &products{
		RecallID:                 rec.RecallID,
		RecallType:               rec.RecallType,
		ProductList:              rec.ProductList,
		UnitsAffected:            rec.UnitsAffected,
		IdentificationNumber:     orNull(rec.IdentificationNumber),
		ManufacturerRecallNumber: orNull(rec.ManufacturerRecallNumber),
		System:                   orNull(rec.System),
	}
	if out.ProductList == nil {
		out.ProductList = []rappel.Product{}
	}
	if len(rec.AffectedModels) > 0 {
		out.AffectedModels = rec.AffectedModels
	}
	if len(rec.Distribution) > 0 {
		out.Distribution = rec.Distribution
	}
	return out
}

func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
