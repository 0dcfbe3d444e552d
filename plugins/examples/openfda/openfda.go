// Package openfda is the example of a plugin for a new source, one the
// binary does not ship: the U.S. Food and Drug Administration's recall
// enforcement reports, as the openFDA API serves them. An integrator builds
// it to Wasm (package wasm beside it), embeds manifest.json and ships the
// module to a running node, which fetches the documents the manifest names
// and hands them to the plugin under /in.
//
// Every /in/*.json file is one API response, {"meta": …, "results": […]};
// each result becomes one record, fda-<recall number>. openFDA writes dates
// YYYYMMDD, a missing value as "N/A", "" or no key at all, and barcodes
// only inside free text.
package openfda

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest"
)

// Source names this plugin's source in problems; the manifest's "source".
const Source = "openfda"

// Agency is the agency the records name; the manifest registers it.
const Agency = "FDA"

// recordIDPrefix starts every record_id: the manifest's "record_id_prefix".
const recordIDPrefix = "fda-"

// response is an openFDA API answer: results, or an error instead.
type response struct {
	Results *[]json.RawMessage `json:"results"`
	Error   *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// result is one enforcement report, with the fields the mapping reads.
type result struct {
	RecallNumber             string `json:"recall_number"`
	ProductType              string `json:"product_type"`
	Status                   string `json:"status"`
	Classification           string `json:"classification"`
	RecallInitiationDate     string `json:"recall_initiation_date"`
	ReportDate               string `json:"report_date"`
	CenterClassificationDate string `json:"center_classification_date"`
	RecallingFirm            string `json:"recalling_firm"`
	City                     string `json:"city"`
	State                    string `json:"state"`
	Country                  string `json:"country"`
	DistributionPattern      string `json:"distribution_pattern"`
	ProductQuantity          string `json:"product_quantity"`
	ProductDescription       string `json:"product_description"`
	ReasonForRecall          string `json:"reason_for_recall"`
	CodeInfo                 string `json:"code_info"`
}

// Normalize reads every *.json file of fsys, in name order, and emits one
// record per result. A result it cannot map is reported and skipped; a
// file that is not an openFDA list of results fails the run, so that the
// node keeps the source's last good data rather than lose it all.
func Normalize(fsys fs.FS, emit func(*rappel.Record) error, report func(rappel.Problem)) error {
	names, err := fs.Glob(fsys, "*.json")
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return errors.New("no .json document was given under /in; the manifest's documents must be openFDA API responses named *.json")
	}
	for _, name := range names {
		results, err := readResults(fsys, name)
		if err != nil {
			return err
		}
		for i, raw := range results {
			rec, problems := mapResult(name, i, raw)
			for _, p := range problems {
				report(p)
			}
			if rec == nil {
				continue
			}
			if err := emit(rec); err != nil {
				return err
			}
		}
	}
	return nil
}

// readResults decodes one document and returns its results.
func readResults(fsys fs.FS, name string) ([]json.RawMessage, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, fmt.Errorf("reading the document %s: %w", name, err)
	}
	defer f.Close()
	var resp response
	if err := json.NewDecoder(guest.SkipBOM(f)).Decode(&resp); err != nil {
		return nil, fmt.Errorf("the document %s is not an openFDA API response, {\"meta\": …, \"results\": […]}: %v", name, err)
	}
	switch {
	case resp.Error != nil:
		return nil, fmt.Errorf("the document %s is an openFDA error response (%s: %s) rather than results; check the document's url in the manifest", name, resp.Error.Code, resp.Error.Message)
	case resp.Results == nil:
		return nil, fmt.Errorf("the document %s has no \"results\" list; an openFDA API response holds {\"meta\": …, \"results\": […]}", name)
	}
	return *resp.Results, nil
}

// mapResult maps the i-th result of file to its record, or to nil and the
// problem that says why it has none.
func mapResult(file string, i int, raw json.RawMessage) (*rappel.Record, []rappel.Problem) {
	var r result
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, []rappel.Problem{{Source: Source, Reason: fmt.Sprintf("Result %d of %s was skipped: it is not an enforcement report (%v).", i+1, file, err)}}
	}
	return r.record(file, i)
}

// value is an upstream text cleaned, or "" when openFDA marks it missing.
func value(s string) string {
	s = guest.CleanText(s)
	if strings.EqualFold(s, "N/A") {
		return ""
	}
	return s
}

// recallTypes maps product_type to recall_type. Biologics and veterinary
// products are health products as Health Canada counts them; tobacco is a
// consumer product.
var recallTypes = map[string]string{
	"Food":       rappel.TypeFood,
	"Drugs":      rappel.TypeHealthProduct,
	"Devices":    rappel.TypeMedicalDevice,
	"Biologics":  rappel.TypeHealthProduct,
	"Veterinary": rappel.TypeHealthProduct,
	"Tobacco":    rappel.TypeConsumerProduct,
}

// statuses maps status to the record's status.
var statuses = map[string]string{
	"Ongoing":    rappel.StatusActive,
	"Terminated": rappel.StatusArchived,
	"Completed":  rappel.StatusArchived,
}

// hazardClasses maps classification to hazard_class.
var hazardClasses = map[string]string{"Class I": "class_1", "Class II": "class_2", "Class III": "class_3"}

// record makes r's record. A result without a recall number, a product
// type this mapping does not know or any date is skipped with a problem;
// an unknown status or classification is reported and the record kept.
func (r *result) record(file string, i int) (*rappel.Record, []rappel.Problem) {
	number, id := value(r.RecallNumber), ""
	skip := func(why string) (*rappel.Record, []rappel.Problem) {
		return nil, []rappel.Problem{{Source: Source, RecordID: id, Reason: fmt.Sprintf("Result %d of %s was skipped: %s.", i+1, file, why)}}
	}
	switch {
	case number == "":
		return skip("it has no recall_number")
	case !idChars(number):
		return skip(fmt.Sprintf("its recall_number %s does not make a record_id of lower-case letters, digits, '.', '_' and '-'", rappel.Quote(number)))
	}
	id = recordIDPrefix + strings.ToLower(number)
	recallType, ok := recallTypes[value(r.ProductType)]
	if !ok {
		return skip(fmt.Sprintf("its product_type %s is not one of Food, Drugs, Devices, Biologics, Veterinary or Tobacco", rappel.Quote(r.ProductType)))
	}
	event, recallDate, err := r.dates()
	if err != nil {
		return skip(err.Error())
	}
	var problems []rappel.Problem
	status, ok := statuses[value(r.Status)]
	if !ok {
		status = rappel.StatusActive
		problems = append(problems, rappel.Problem{Source: Source, RecordID: id, Reason: fmt.Sprintf("The status %s of result %d of %s is not Ongoing, Terminated or Completed; the record was kept as active.", rappel.Quote(r.Status), i+1, file)})
	}
	hazard, ok := hazardClasses[value(r.Classification)]
	if c := value(r.Classification); !ok && c != "" && c != "Not Yet Classified" {
		problems = append(problems, rappel.Problem{Source: Source, RecordID: id, Reason: fmt.Sprintf("The classification %s of result %d of %s is not Class I, II or III; the record was kept without a hazard class.", rappel.Quote(c), i+1, file)})
	}
	product, reason, firm := value(r.ProductDescription), value(r.ReasonForRecall), value(r.RecallingFirm)
	rec := &rappel.Record{
		RecordID:    id,
		RecallID:    number,
		RecallType:  recallType,
		Agency:      Agency,
		Status:      status,
		EventDate:   event,
		RecallDate:  recallDate,
		HazardClass: hazard,
		Translations: rappel.Translations{EN: &rappel.Translation{
			Title:              title(product),
			ProductDescription: product,
			HazardDescription:  reason,
		}},
		RecallingFirm: firm,
		Allergens:     allergens(reason),
		PlaceOfOrigin: joinPresent(r.City, r.State, r.Country),
		UnitsSold:     value(r.ProductQuantity),
		UPC:           firstUPC(product, value(r.CodeInfo)),
	}
	if firm != "" {
		rec.Companies = []string{firm}
	}
	if d := value(r.DistributionPattern); d != "" {
		rec.Distribution = []string{d}
	}
	return rec, problems
}

// idChars reports whether a recall number can follow the prefix in a
// record_id: 1 to 64 ASCII letters, digits, '.', '_' and '-', starting with
// a letter or digit.
func idChars(number string) bool {
	if len(number) > 64 || !isLetter(number[0]) && !isDigit(number[0]) {
		return false
	}
	for i := 0; i < len(number); i++ {
		c := number[i]
		if !isLetter(c) && !isDigit(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// dates returns the event date (the recall's initiation) and the recall
// date (its report), each falling back to the other, then to the date the
// FDA classified the recall: every report has one of the three.
func (r *result) dates() (event, recall string, err error) {
	var d [3]string
	for k, f := range []struct{ name, v string }{
		{"recall_initiation_date", r.RecallInitiationDate},
		{"report_date", r.ReportDate},
		{"center_classification_date", r.CenterClassificationDate},
	} {
		v := value(f.v)
		if v == "" {
			continue
		}
		t, perr := time.Parse("20060102", v)
		if perr != nil {
			return "", "", fmt.Errorf("its %s %s is not a date written YYYYMMDD", f.name, rappel.Quote(v))
		}
		d[k] = t.Format(time.DateOnly)
	}
	event = firstPresent(d[0], d[1], d[2])
	recall = firstPresent(d[1], d[0], d[2])
	if event == "" {
		return "", "", errors.New("it has none of recall_initiation_date, report_date and center_classification_date")
	}
	return event, recall, nil
}

func firstPresent(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// joinPresent joins the parts openFDA gives, ", " between them.
func joinPresent(parts ...string) string {
	var out []string
	for _, p := range parts {
		if v := value(p); v != "" {
			out = append(out, v)
		}
	}
	return strings.Join(out, ", ")
}

// maxTitle is the most characters a title has: the product description is
// often a whole label, address of the maker included.
const maxTitle = 120

// title is the product description cut at a word boundary to maxTitle
// characters, an ellipsis marking the cut.
func title(product string) string {
	runes := []rune(product)
	if len(runes) <= maxTitle {
		return product
	}
	head := string(runes[:maxTitle-1]) // room for the ellipsis
	// Unless the cut falls before a space, the last word is partial.
	if i := strings.LastIndexByte(head, ' '); i > 0 && runes[maxTitle-1] != ' ' {
		head = head[:i]
	}
	return strings.TrimRight(head, " ,;:-") + "…"
}

// allergenCues are what a reason for recall says when it is about an
// allergen: "undeclared", "does not declare", "allergen", "allergic",
// "contains milk", "not listed on the product label", "fail to disclose".
var allergenCues = []string{"declare", "allerg", "contain", "label", "disclose"}

// allergens returns the allergens the reason for recall names, in order,
// when it speaks of allergens at all. The product description is not
// read: it names what the product is made of ("Milk Chocolate", "Crab
// Meat", "Gluten Free"), not what the recall is about.
func allergens(reason string) []string {
	lower := strings.ToLower(reason)
	cued := false
	for _, c := range allergenCues {
		cued = cued || strings.Contains(lower, c)
	}
	if !cued {
		return nil
	}
	words := strings.FieldsFunc(lower, func(r rune) bool { return !unicode.IsLetter(r) })
	var out []string
	for i := 0; i < len(words); i++ {
		a, ok := "", false
		// Two-word names first: "tree nuts", "sesame seeds", "pine nuts".
		if i+1 < len(words) {
			if a, ok = guest.Allergen(words[i] + " " + words[i+1]); ok {
				i++
			}
		}
		if !ok {
			a, ok = guest.Allergen(words[i])
		}
		if ok && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// barcodeCues introduce a barcode in openFDA's free text ("UPC
// 064100852464", "UPC: 0 60383 70928 0", "UPC Code 786516-76002 6").
var barcodeCues = []string{"upc", "ean", "gtin"}

// firstUPC returns the first barcode a cue introduces in texts, in order,
// that rappel.ParseGTIN accepts, as its digits (a UPC-A printed without
// its leading 0 gets it back), or "". A cue counts only at the start of a
// word: "SUPC #4351050" is a distributor's item number.
func firstUPC(texts ...string) string {
	for _, t := range texts {
		for i := 0; i < len(t); i++ {
			if i > 0 && isLetter(t[i-1]) {
				continue
			}
			for _, cue := range barcodeCues {
				if len(t)-i >= len(cue) && strings.EqualFold(t[i:i+len(cue)], cue) {
					if code := barcodeAt(t[i+len(cue):]); code != "" {
						return code
					}
				}
			}
		}
	}
	return ""
}

func isLetter(b byte) bool { return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' }

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

// cueFillers may stand between a cue and its digits.
var cueFillers = []string{"s", "code", "codes", "number", "no", "#", ":", ".", "-"}

// maxGTIN is the most digits a barcode has, a GTIN-14's.
const maxGTIN = 14

// barcodeAt reads the barcode s starts with, after a cue: digit groups
// separated by single spaces or dashes. Printings run into the text after
// them ("UPC 0093 0390  24 units per case"), so it tries the groups from
// the longest run down and returns the first that parses.
func barcodeAt(s string) string {
	s = skipFillers(s)
	var groups []string
	for digits := 0; digits <= maxGTIN; {
		n := 0
		for n < len(s) && isDigit(s[n]) {
			n++
		}
		if n == 0 {
			break
		}
		groups = append(groups, s[:n])
		digits += n
		s = s[n:]
		if len(s) < 2 || (s[0] != ' ' && s[0] != '-') || !isDigit(s[1]) {
			break
		}
		s = s[1:]
	}
	for k := len(groups); k > 0; k-- {
		code := strings.Join(groups[:k], "")
		if len(code) > maxGTIN {
			continue
		}
		if _, err := rappel.ParseGTIN(code); err == nil {
			if len(code) == 11 {
				code = "0" + code
			}
			return code
		}
	}
	return ""
}

// skipFillers drops the spaces and filler words between a cue and its
// digits.
func skipFillers(s string) string {
	for {
		t := strings.TrimLeft(s, " ")
		for _, f := range cueFillers {
			if len(t) >= len(f) && strings.EqualFold(t[:len(f)], f) {
				rest := t[len(f):]
				if rest == "" || !isLetter(rest[0]) {
					t = rest
					break
				}
			}
		}
		if len(t) == len(s) { // t is a suffix of s: nothing was dropped
			return s
		}
		s = t
	}
}
