package edge

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
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
// recalls of products carrying that barcode: those naming it exactly, then
// those listing a prefix it starts with, each newest first. Any printed
// form of one code (UPC-A, UPC-E, EAN-8, EAN-13, GTIN-14, with spaces or
// dashes) finds the same records: the store's index holds their GTIN-14,
// and prefixes in the same frame (rappel.UPCPrefixGTINs).
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
	tail, err := s.barcodeAnswer(r, look, g, lang)
	if err != nil {
		return err
	}
	var buf [128]byte
	head := append(buf[:0], '{')
	head = appendJSONField(head, "upc", v)
	head = appendJSONField(head, "digits", rappel.StripBarcode(v))
	head = appendJSONField(head, "gtin", string(g))
	writeJSONParts(w, r, http.StatusOK, head, tail)
	return nil
}

// barcodeAnswerHead is how the answer of a barcode lookup begins before
// its count when its per-request fields are empty (answerTail).
const barcodeAnswerHead = `{"upc":"","digits":"","gtin":"",`

// barcodeAnswer returns the body of a barcode lookup after its upc, digits
// and gtin: the count and the recalls of g, from the answers kept
// (answers.go) or found and kept.
func (s *Server) barcodeAnswer(r *http.Request, look rappel.Lookup, g rappel.GTIN, lang string) ([]byte, error) {
	snap := s.Catalog.Snapshot()
	set := s.answers.set(r.Context(), look, snap)
	var kb [64]byte
	key := answerKey(kb[:0], "upc", string(g), lang)
	if b, ok := set.get(key); ok {
		return b, nil
	}
	res, err := s.barcodeRecalls(r, look, snap, g, lang)
	if err != nil {
		return nil, err
	}
	b, err := answerTail(barcodeResults{Count: len(res), Results: res}, barcodeAnswerHead)
	if err != nil {
		return nil, err
	}
	set.put(key, b)
	return b, nil
}

// Values of a barcode result's match.
const (
	matchExact  = "exact"  // a product's upc, or the record's, is the code
	matchPrefix = "prefix" // the code starts with a product's upc_prefix
)

// barcodeRecalls finds the recalls naming g exactly, newest first, then
// those with a product whose upc_prefix g starts with (items sold by
// weight, whose codes end with their price), newest first. A record found
// both ways is listed once, as exact. Their summaries come from snap.
func (s *Server) barcodeRecalls(r *http.Request, look rappel.Lookup, snap rappel.Snapshot, g rappel.GTIN, lang string) ([]found, error) {
	exact, err := look.RecordIDsByGTIN(r.Context(), g)
	if err != nil {
		return nil, fmt.Errorf("looking up barcode %s: %w", g, err)
	}
	prefixed, err := look.RecordIDsByGTINPrefix(r.Context(), g)
	if err != nil {
		return nil, fmt.Errorf("looking up the prefixes of barcode %s: %w", g, err)
	}
	prefixed = slices.DeleteFunc(prefixed, func(id string) bool {
		_, ok := slices.BinarySearch(exact, id) // record_id order
		return ok
	})
	return append(foundOf(snap.Summaries(exact), lang, matchExact),
		foundOf(snap.Summaries(prefixed), lang, matchPrefix)...), nil
}

// barcodeInvalid records the 422 item of a barcode ParseGTIN refused, with
// the fix: the right check digit, or what a barcode holds.
func barcodeInvalid(p *params, v string, err error) {
	p.invalid(rappel.InvalidValue(rappel.QueryLoc("upc"), v, barcodeReason(v, err)))
}

// barcodeReason is why ParseGTIN refused v, and the fix: the right check
// digit, or what a barcode holds.
func barcodeReason(v string, err error) rappel.Reason {
	var be *rappel.BarcodeError
	if !errors.As(err, &be) {
		be = &rappel.BarcodeError{Reason: err.Error(), WantCheck: -1}
	}
	r := rappel.Reason{Problem: "is not a valid barcode: " + be.Reason}
	switch digits := rappel.StripBarcode(v); {
	case be.WantCheck >= 0:
		r.Fix = "check the digits against the package: if only the last one is mistyped, the code is " +
			rappel.Quote(digits[:len(digits)-1]+strconv.Itoa(be.WantCheck))
		r.Ctx = map[string]any{"check_digit": be.WantCheck}
	case digits == "":
		r.Fix = "send the digits printed under the bars"
	case !rappel.IsDigits(digits):
		r.Fix = "send only the digits printed under the bars"
	default:
		r.Fix = "check for a missing or extra digit"
	}
	return r
}
