package edge

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/rappel-ca/rappel"
)

// barcodeResults is the body of GET /recall/upc. upc is the parameter as
// given, digits the same without spaces and dashes, gtin the GTIN-14 every
// printed form of the code shares, which is what is matched.
type barcodeResults struct {
	UPC     string  `json:"upc"`
	Digits  string  `json:"digits"`
	GTIN    string  `json:"gtin"`
	Count   int     `json:"count"`
	Results []found `json:"results"`
}

// getByBarcode answers GET /recall/upc?upc=<barcode>[&lang=en|fr] with the
// recalls of products carrying that barcode, newest first. Any printed
// form of one code (UPC-A, UPC-E, EAN-8, EAN-13, GTIN-14, with spaces or
// dashes) finds the same records: the store's index holds their GTIN-14.
func (s *Server) getByBarcode(w http.ResponseWriter, r *http.Request) error {
	p := paramsOf(w)
	lang := p.enum("lang", rappel.Langs)
	v := p.required("upc")
	var g rappel.GTIN
	if _, ok := p.str("upc"); ok {
		var err error
		if g, err = rappel.ParseGTIN(v); err != nil {
			barcodeInvalid(p, v, err)
		}
	}
	if err := p.err(); err != nil {
		return err
	}
	look, err := s.lookup()
	if err != nil {
		return err
	}
	ids, err := look.RecordIDsByGTIN(r.Context(), g)
	if err != nil {
		return fmt.Errorf("looking up barcode %s: %w", g, err)
	}
	res := foundOf(s.Catalog.Snapshot().Summaries(ids), lang, "")
	b, err := json.Marshal(barcodeResults{UPC: v, Digits: rappel.StripBarcode(v), GTIN: string(g), Count: len(res), Results: res})
	if err != nil {
		return err
	}
	writeJSON(w, r, http.StatusOK, b)
	return nil
}

// barcodeInvalid records the 422 item of a barcode ParseGTIN refused, with
// the fix: the right check digit, or what a barcode holds.
func barcodeInvalid(p *params, v string, err error) {
	var be *rappel.BarcodeError
	if !errors.As(err, &be) {
		be = &rappel.BarcodeError{Reason: err.Error(), WantCheck: -1}
	}
	r := rappel.Reason{Problem: "is not a valid barcode: " + be.Reason}
	switch digits := rappel.StripBarcode(v); {
	case be.WantCheck >= 0:
		r.Fix = "check the digits against the package: if only the last one is mistyped, the code is " +
			quote(digits[:len(digits)-1]+strconv.Itoa(be.WantCheck))
		r.Ctx = map[string]any{"check_digit": be.WantCheck}
	case digits == "":
		r.Fix = "send the digits printed under the bars"
	case !allDigits(digits):
		r.Fix = "send only the digits printed under the bars"
	default:
		r.Fix = "check for a missing or extra digit"
	}
	p.invalid(rappel.InvalidValue(rappel.QueryLoc("upc"), v, r))
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
