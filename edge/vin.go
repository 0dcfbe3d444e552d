package edge

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/vindecode"
)

// How a VIN lookup matched its results (docs/api.md, "Lookups").
const (
	matchMakeModelYear = "make_model_year"
	matchMakeYear      = "make_year"
)

// What the check_digit of a VIN lookup says: position 9 holds the check
// digit, or it does not and the VIN was assigned outside North America,
// where the check digit is not mandatory (a North American VIN with a
// wrong one is refused).
const (
	checkDigitValid       = "valid"
	checkDigitNotVerified = "not_verified"
)

// vinDecoder decodes the VINs of GET /recall/vin.
var vinDecoder rappel.VINDecoder = vindecode.Decoder{}

// vinResults is the body of GET /recall/vin: the VIN as decoded (upper
// case, without spaces or dashes), whether its check digit was verified,
// what it tells, and the vehicle recalls covering that vehicle, newest
// first.
type vinResults struct {
	VIN        string     `json:"vin"`
	CheckDigit string     `json:"check_digit"`
	Decoded    vinDecoded `json:"decoded"`
	Count      int        `json:"count"`
	Results    []found    `json:"results"`
}

// vinDecoded holds the parts of a VIN that could be decoded; the others
// are null.
type vinDecoded struct {
	Make  *string `json:"make"`
	Model *string `json:"model"`
	Year  *int    `json:"year"`
}

// getByVIN answers GET /recall/vin?vin=<VIN>[&lang=en|fr]. It decodes the
// make, model and model year, then lists the vehicle recalls whose
// affected models cover all three; when the model is unknown, or no recall
// names it, those covering the make and year.
func (s *Server) getByVIN(w http.ResponseWriter, r *http.Request) error {
	p := paramsOf(w)
	lang := p.enum("lang", rappel.Langs)
	v := p.required("vin")
	var vin rappel.VIN
	if _, ok := p.str("vin"); ok {
		var err error
		if vin, err = rappel.ParseVIN(v); err != nil {
			var ve *rappel.VINError
			reason := err.Error()
			if errors.As(err, &ve) {
				reason = ve.Reason
			}
			p.invalid(rappel.InvalidValue(rappel.QueryLoc("vin"), v, rappel.Reason{Problem: "is not a valid VIN: " + reason}))
		}
	}
	if err := p.err(); err != nil {
		return err
	}
	look, err := s.lookup()
	if err != nil {
		return err
	}
	d := vinDecoder.Decode(vin, s.Now())
	checkDigit := checkDigitValid
	if !vin.CheckDigitValid() {
		checkDigit = checkDigitNotVerified
	}
	tail, err := s.vinAnswer(r, look, d, lang)
	if err != nil {
		return err
	}
	var buf [96]byte
	head := append(buf[:0], '{')
	head = appendJSONField(head, "vin", string(vin))
	head = appendJSONField(head, "check_digit", checkDigit)
	writeJSONParts(w, r, http.StatusOK, head, tail)
	return nil
}

// vinAnswerHead is how the answer of a VIN lookup begins before its
// decoded fields when its per-request fields are empty (answerTail).
const vinAnswerHead = `{"vin":"","check_digit":"",`

// vinAnswer returns the body of a VIN lookup after its vin and check_digit:
// what d decodes to and the recalls covering it, from the answers kept
// (answers.go) or found and kept.
func (s *Server) vinAnswer(r *http.Request, look rappel.Lookup, d rappel.DecodedVIN, lang string) ([]byte, error) {
	snap := s.Catalog.Snapshot()
	set := s.answers.set(r.Context(), look, snap)
	var kb [128]byte
	key := answerKey(kb[:0], "vin", d.Make, d.Model, strconv.Itoa(d.Year), lang)
	if b, ok := set.get(key); ok {
		return b, nil
	}
	res := vinResults{Decoded: vinDecoded{Make: orNull(d.Make), Model: orNull(d.Model)}}
	if d.Year != 0 {
		res.Decoded.Year = &d.Year
	}
	var err error
	if res.Results, err = s.vehicleRecalls(r, look, snap, d, lang); err != nil {
		return nil, err
	}
	res.Count = len(res.Results)
	b, err := answerTail(res, vinAnswerHead)
	if err != nil {
		return nil, err
	}
	set.put(key, b)
	return b, nil
}

// vehicleRecalls finds the vehicle recalls of the make, model and year of
// d in look, summarized from snap, falling back to the make and year.
func (s *Server) vehicleRecalls(r *http.Request, look rappel.Lookup, snap rappel.Snapshot, d rappel.DecodedVIN, lang string) ([]found, error) {
	if d.Make == "" || d.Year == 0 {
		return []found{}, nil
	}
	find := func(model, match string) ([]found, error) {
		ids, err := look.RecordIDsByVehicle(r.Context(), d.Make, model, d.Year)
		if err != nil {
			return nil, fmt.Errorf("looking up vehicle %s %s %d: %w", d.Make, model, d.Year, err)
		}
		sums := snap.Summaries(ids)
		kept := sums[:0]
		for _, sm := range sums {
			if sm.RecallType == rappel.TypeVehicle {
				kept = append(kept, sm)
			}
		}
		return foundOf(kept, lang, match), nil
	}
	if d.Model != "" {
		res, err := find(d.Model, matchMakeModelYear)
		if err != nil || len(res) > 0 {
			return res, err
		}
	}
	return find("", matchMakeYear)
}
