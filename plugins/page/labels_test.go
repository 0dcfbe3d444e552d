package page_test

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest"
	"github.com/rappel-ca/rappel/plugins/guest/guesttest"
)

// The 2023 scrapes (PROVENANCE.md): their columns are the pages' own
// "Details" labels (div.field--label), the legacy pages' <dt> labels, and
// the scraper's own columns, each from a part of the page.
const (
	chanronnieFood     = "pages/chanronnie-2023-rawdata_food.csv"
	chanronnieConsumer = "pages/chanronnie-2023-rawdata_consumer.csv"
)

// labelCheck is how a column of the scrapes is mapped: where its value
// goes on the page written for the test, a test of the value (the scrapes
// shift values in places), and what the record must then hold.
type labelCheck struct {
	layout string // "current" (a Details label), "legacy" (a <dt>), "page" (a part of the page), "none"
	valid  func(string) bool
	check  func(rec *rappel.Record, v string) bool
}

var (
	any_      = func(v string) bool { return v != "" }
	classLike = regexp.MustCompile(`^(Class|Type) [123I]+$`).MatchString
	raLike    = regexp.MustCompile(`^RA-\d+$`).MatchString
	digits    = regexp.MustCompile(`^\d+$`).MatchString
	dateLike  = regexp.MustCompile(`^[A-Z][a-z]+ \d{1,2}, \d{4}$`).MatchString
	isoDate   = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`).MatchString
)

// firstLine is a multi-line value's first line.
func firstLine(v string) string {
	return strings.TrimSpace(strings.SplitN(strings.TrimSpace(v), "\n", 2)[0])
}

// chanronnieColumns are every column of the two scrapes and how each is
// mapped: a column the files have and this map lacks fails the test.
var chanronnieColumns = map[string]labelCheck{
	// The scraper's own columns.
	"":           {layout: "none"},                                                                                               // the row's index
	"Unnamed: 0": {layout: "none"},                                                                                               // an index written by an earlier save
	"Date":       {"page", isoDate, func(r *rappel.Record, v string) bool { return r.EventDate == v }},                           // the last <time>: the Recall date
	"Item":       {"page", any_, func(r *rappel.Record, v string) bool { return r.Translations.EN.Title == guest.CleanText(v) }}, // h1
	"Brand":      {"page", any_, func(r *rappel.Record, v string) bool { return strings.Contains(r.ProductList[0].Name, v) }},    // Brand(s)
	"Product": {"page", any_, func(r *rappel.Record, v string) bool {
		return strings.Contains(r.ProductList[0].Name, strings.TrimSpace(v))
	}}, // the summary's Product
	"Issue":              {"page", any_, func(r *rappel.Record, v string) bool { return true }},                              // the summary's Issue: allergens (checked per page type)
	"Nb_affected_models": {"page", any_, func(r *rappel.Record, v string) bool { return true }},                              // the rows of the table (checked per page type)
	"Recall type":        {"page", any_, func(r *rappel.Record, v string) bool { return strings.EqualFold(r.AlertType, v) }}, // div.h3#wb-cont-nav, lower-cased
	// The current layout's Details labels.
	"Alert / recall type": {"current", any_, func(r *rappel.Record, v string) bool { return r.AlertType != "" }},
	"Category": {"current", any_, func(r *rappel.Record, v string) bool {
		return slices.Contains(r.Categories, strings.SplitN(v, " - ", 2)[0])
	}},
	"Companies":             {"current", any_, func(r *rappel.Record, v string) bool { return hasFirm(r, v) }},
	"Published by":          {"current", any_, func(r *rappel.Record, v string) bool { return rappel.IsAgency(r.Agency) }},
	"Audience":              {"current", any_, func(r *rappel.Record, v string) bool { return true }}, // read; no record field
	"Recall class":          {"current", classLike, func(r *rappel.Record, v string) bool { return r.HazardClass != "" }},
	"Identification number": {"current", any_, func(r *rappel.Record, v string) bool { return r.IdentificationNumber == v }},
	// The legacy layout's <dt> labels.
	"Starting date:":                      {"legacy", dateLike, func(r *rappel.Record, v string) bool { return r.EventDate != "" }},
	"Posting date:":                       {"legacy", dateLike, func(r *rappel.Record, v string) bool { return r.RecallDate != "" }},
	"Type of communication:":              {"legacy", any_, func(r *rappel.Record, v string) bool { return r.AlertType != "" }},
	"Alert sub-type:":                     {"legacy", any_, func(r *rappel.Record, v string) bool { return true }}, // read; no record field
	"Subcategory:":                        {"legacy", any_, func(r *rappel.Record, v string) bool { return len(r.Categories) > 0 }},
	"Hazard classification:":              {"legacy", classLike, func(r *rappel.Record, v string) bool { return r.HazardClass != "" }},
	"Source of recall:":                   {"legacy", any_, func(r *rappel.Record, v string) bool { return rappel.IsAgency(r.Agency) }},
	"Recalling firm:":                     {"legacy", any_, func(r *rappel.Record, v string) bool { return r.RecallingFirm == v }},
	"Distribution:":                       {"legacy", any_, func(r *rappel.Record, v string) bool { return len(r.Distribution) > 0 }},
	"Extent of the product distribution:": {"legacy", any_, func(r *rappel.Record, v string) bool { return true }}, // read; no record field
	"CFIA reference number:":              {"legacy", digits, func(r *rappel.Record, v string) bool { return r.CFIAID == v }},
	"Issue:":                              {"legacy", any_, func(r *rappel.Record, v string) bool { return true }}, // read: allergens when it names them
	"Audience:":                           {"legacy", any_, func(r *rappel.Record, v string) bool { return true }}, // read; no record field
	"Identification number:":              {"legacy", raLike, func(r *rappel.Record, v string) bool { return r.IdentificationNumber == v }},
}

// hasFirm reports whether rec names the firm of a Companies value (its
// text as the scraper kept it: a heading line, then the firm's name).
func hasFirm(r *rappel.Record, v string) bool {
	lines := strings.Split(strings.TrimSpace(v), "\n")
	name := strings.TrimSpace(lines[0])
	if h := strings.ToLower(name); len(lines) > 1 && (h == "distributor" || h == "manufacturer" || h == "importer") {
		name = strings.TrimSpace(lines[1])
	}
	return r.RecallingFirm == name || r.Manufacturer == name || r.Importer == name || slices.Contains(r.Companies, name)
}

// companiesHTML writes a scraped Companies value back as the page's free
// text: a known heading line bold, each line a paragraph.
func companiesHTML(v string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(v), "\n") {
		l = strings.TrimSpace(l)
		switch strings.ToLower(l) {
		case "distributor", "manufacturer", "importer":
			fmt.Fprintf(&b, "<p><strong>%s</strong></p>", esc(l))
		case "":
		default:
			fmt.Fprintf(&b, "<p>%s</p>", esc(l))
		}
	}
	return b.String()
}

// scrape reads a scrape: its header and, for each column, the first value
// its check finds valid.
func scrape(t *testing.T, name string) (header []string, values map[string]string) {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(guesttest.RealSample(t, name))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header, values = rows[0], map[string]string{}
	for i, col := range header {
		c, ok := chanronnieColumns[col]
		if !ok || c.layout == "none" {
			continue
		}
		for _, r := range rows[1:] {
			if v := strings.TrimSpace(r[i]); c.valid(v) && (col != "Companies" || strings.Contains(v, "\n")) {
				values[col] = v
				break
			}
		}
		if _, ok := values[col]; !ok {
			t.Errorf("%s: no valid value of %q", name, col)
		}
	}
	return header, values
}

// detailsField writes one Details label and its value in the live markup.
func detailsField(label, class, value string) string {
	return fmt.Sprintf(`<div class="field field--name-node-id field--label-inline"><div class="field--label">%s</div><div class="field--item"><div class="field field--name-field-%s field--items"><div class="field--item">%s</div></div></div></div>`, esc(label), class, value)
}

// labelPages writes the two pages of a scrape's values: one in the current
// layout, its Details labels and page parts, one in the legacy layout, its
// <dt> labels.
func labelPages(values map[string]string) (current, legacy string) {
	v := func(col string) string { return esc(values[col]) }
	var b strings.Builder
	fmt.Fprintf(&b, `<html lang="en"><body><main><div class="region region-header"><div class="h3" id="wb-cont-nav">%s</div><h1 class="gc-thickline" id="wb-cont"><span>%s</span></h1></div>`, v("Alert / recall type"), v("Item"))
	fmt.Fprintf(&b, `<details class="ar-brand-details"><summary>Brand(s)</summary><div class="field field--name-field-brand-ref field--items"><div class="field--item"><a href="/en/search/site">%s</a></div></div></details>`, v("Brand"))
	fmt.Fprintf(&b, `<section class="ar-summary ar-section"><h2>Summary</h2><div class="alert alert-info"><div class="field field--name-field-product field--label-inline"><div id="product" class="field--label">Product</div><div class="field field--name-field-product field--item">%s</div></div>`+
		`<div class="field field--name-field-issue-type field--label-inline"><div id="issue" class="field--label">Issue</div><div class="field field--name-field-issue-type field--items"><div class="field--item">%s</div></div></div></div></section>`, v("Product"), v("Issue"))
	b.WriteString(`<section class="ar-additional-info ar-section"><h2>Additional information</h2><details><summary>Details</summary>`)
	fmt.Fprintf(&b, `<div class="field field--name-recall-type field--label-inline"><div class="field--label">Alert / recall type</div><div class="field field--name-field-recall-type field--item">%s</div></div>`, v("Alert / recall type"))
	fmt.Fprintf(&b, `<div class="field field--name-category field--label-inline"><div class="field--label">Category</div><div class="field field--name-field-category field--items"><div class="field--item">%s</div></div></div>`, v("Category"))
	fmt.Fprintf(&b, `<div class="field field--name-companies"><div class="field--label">Companies</div><div class="field field--name-field-companies field--item">%s</div></div>`, companiesHTML(values["Companies"]))
	fmt.Fprintf(&b, `<div class="field field--name-node-id field--label-inline"><div class="field--label">Published by</div><div class="field--item"><span class="field field--name-field-organization field--item">%s</span></div></div>`, v("Published by"))
	b.WriteString(detailsField("Audience", "who-this-is-for", v("Audience")))
	b.WriteString(detailsField("Recall class", "hazard-type", v("Recall class")))
	fmt.Fprintf(&b, `<div class="field field--label-inline"><div class="field--label">Recall date</div><div class="field--item"><div class="field field--name-field-recall-date field--item"><time datetime="%sT12:00:00Z">%s</time></div></div></div>`, v("Date"), v("Date"))
	fmt.Fprintf(&b, `<div class="field field--name-node-id field--label-inline"><div class="field--label">Identification number</div><div class="field--item">%s</div></div>`, v("Identification number"))
	b.WriteString(`</details></section></main></body></html>`)
	current = b.String()

	b.Reset()
	b.WriteString(`<html lang="en"><body><main><h1 class="gc-thickline" id="wb-cont"><span>A legacy notice</span></h1><div class="recall-alert-body"><dl>`)
	for col, c := range chanronnieColumns {
		if c.layout == "legacy" && values[col] != "" {
			fmt.Fprintf(&b, "<dt>%s</dt><dd>%s</dd>", esc(col), esc(values[col]))
		}
	}
	b.WriteString(`</dl></div></main></body></html>`)
	return current, b.String()
}

// checkLabels writes the pages of a scrape's values, runs them through the
// shipped plugin and checks that no label is unknown and each lands in its
// field.
func checkLabels(t *testing.T, name string) {
	header, values := scrape(t, name)
	for _, col := range header {
		if _, ok := chanronnieColumns[col]; !ok {
			t.Errorf("%s: the column %q has no mapping in this test: add it to the contract", name, col)
		}
	}
	current, legacy := labelPages(values)
	v := run(t, map[string]string{"en/1.html": current, "en/2.html": legacy})
	for _, p := range v.Problems {
		t.Errorf("problem: %s", p.Reason)
	}
	recs := byID(v)
	for _, col := range header {
		c := chanronnieColumns[col]
		rec := map[string]*rappel.Record{"current": recs["hc-1"], "page": recs["hc-1"], "legacy": recs["hc-2"]}[c.layout]
		if c.layout == "none" || values[col] == "" {
			continue
		}
		if rec == nil {
			t.Fatalf("no record of the %s page; problems %v", c.layout, v.Problems)
		}
		if !c.check(rec, values[col]) {
			t.Errorf("%s: the %s column %q, %q, is not in the record: %+v", name, c.layout, col, values[col], rec)
		}
	}
}

// TestLabelsFood: every column of the 2023 food scrape is mapped.
func TestLabelsFood(t *testing.T) { checkLabels(t, chanronnieFood) }

// TestLabelsConsumer: every column of the 2023 consumer scrape is mapped.
func TestLabelsConsumer(t *testing.T) { checkLabels(t, chanronnieConsumer) }
