package realjudged

import (
	"encoding/json"
	"fmt"
	"html"
	"strings"
	"testing"
	"unicode"

	"github.com/rappel-ca/rappel/plugins/guest/guesttest"
)

// RadarFile is the parsed output of 34 live recall pages (pages/PROVENANCE.md
// of the real samples): its affected-products keys are the camelCase of the
// pages' real <th> texts.
const RadarFile = "pages/recall-radar-web-2026-07-canada-detail-parsed-EXCERPT.json"

// RadarRecord is one record of RadarFile.
type RadarRecord struct {
	NID    string `json:"NID"`
	Title  string `json:"Title"`
	URL    string `json:"URL"`
	Detail struct {
		RecallType  string   `json:"recallType"`
		Title       string   `json:"title"`
		LastUpdated string   `json:"lastUpdated"`
		BrandNames  []string `json:"brandNames"`
		Summary     struct {
			Product, Issue, Action string
		} `json:"summary"`
		Header   string `json:"affectedProductsHeader"`
		Caption  string `json:"affectedProductsCaption"`
		Products []struct {
			Fields RadarFields `json:"fields"`
		} `json:"affectedProducts"`
		Images []struct {
			URL string `json:"url"`
			Alt string `json:"alt"`
		} `json:"images"`
	} `json:"Detail"`
}

// RadarFields keeps a row's keys in their order, the table's columns.
type RadarFields struct {
	Keys   []string
	Values map[string]string
}

func (f *RadarFields) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	if _, err := dec.Token(); err != nil {
		return err
	}
	f.Values = map[string]string{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return err
		}
		var v string
		if err := dec.Decode(&v); err != nil {
			return err
		}
		f.Keys = append(f.Keys, k.(string))
		f.Values[k.(string)] = v
	}
	return nil
}

// Radar reads every record of RadarFile: skipped when the real samples are
// absent, a failure then under RAPPEL_CI (guesttest.RealSample).
func Radar(t testing.TB) []RadarRecord {
	t.Helper()
	var f struct{ Records []RadarRecord }
	if err := json.Unmarshal(guesttest.RealSample(t, RadarFile), &f); err != nil {
		t.Fatal(err)
	}
	return f.Records
}

// HeaderText turns a camelCase key back into a header as the pages print
// it: "lotOrSerialNumber" is "Lot or serial number", "codeS" "Code(s)",
// "upc" "UPC".
func HeaderText(key string) string {
	switch key {
	case "codeS":
		return "Code(s)"
	case "upc":
		return "UPC"
	}
	var b strings.Builder
	for i, r := range key {
		switch {
		case i == 0:
			b.WriteRune(unicode.ToUpper(r))
		case unicode.IsUpper(r):
			b.WriteRune(' ')
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// esc is HTML text.
func esc(s string) string { return html.EscapeString(s) }

// Page writes r as a page of the current layout, in the markup of the
// live pages (82165, 82667): header, brands, last updated, summary,
// images, and the affected-products table with the real headers, a
// <thead> unless thead is false (the header row is then the first row of
// data, as the file has it).
func (r RadarRecord) Page(thead bool) string {
	d := r.Detail
	var b strings.Builder
	fmt.Fprintf(&b, `<!DOCTYPE html><html lang="en"><head><link rel="canonical" href="%s"></head><body><main property="mainContentOfPage">`, esc(r.URL))
	fmt.Fprintf(&b, `<div class="region region-header"><div class="h3" id="wb-cont-nav">%s</div><h1 class="gc-thickline" id="wb-cont"><span>%s</span></h1></div>`, esc(d.RecallType), esc(d.Title))
	b.WriteString(`<details class="ar-brand-details"><summary>Brand(s)</summary><div class="ar-brand"><div class="field field--name-field-brand-ref field--type-entity-reference field--label-hidden field--items">`)
	for _, br := range d.BrandNames {
		fmt.Fprintf(&b, `<div class="field--item"><a href="/en/search/site?f%%5B1%%5D=brand%%3A1">%s</a></div>`, esc(br))
	}
	b.WriteString(`</div></div></details>`)
	fmt.Fprintf(&b, `<div class="ar-last-modified ar-section"><div class="field field--name-field-last-updated field--type-datetime field--label-inline"><div class="field--label">Last updated</div><div class="field field--name-field-last-updated field--type-datetime field--label-hidden field--item"><time datetime="%sT12:00:00Z">%s</time></div></div></div>`, d.LastUpdated, d.LastUpdated)
	fmt.Fprintf(&b, `<section class="ar-summary ar-section overflow-auto"><h2 class="h2" id="section_1">Summary</h2><div class="alert alert-info">`+
		`<div class="field field--name-field-product field--label-inline"><div id="product" class="field--label">Product</div><div class="field field--name-field-product field--type-string field--label-hidden field--item">%s</div></div>`+
		`<div class="issue-type clearfix"><div class="field field--name-field-issue-type field--label-inline"><div id="issue" class="field--label">Issue</div><div class="field field--name-field-issue-type field--type-entity-reference field--label-hidden field--items"><div class="field--item">%s</div></div></div></div>`+
		`<div class="field field--name-field-action field--label-inline"><div id="action" class="field--label">What to do</div><div class="field field--name-field-action field--type-text-long field--label-hidden field--item"><p>%s</p></div></div></div></section>`,
		esc(d.Summary.Product), esc(d.Summary.Issue), esc(d.Summary.Action))
	if len(d.Images) > 0 {
		b.WriteString(`<div class="ar-product-images ar-section"><div class="product-images">`)
		for _, im := range d.Images {
			path := strings.TrimPrefix(im.URL, "https://recalls-rappels.canada.ca")
			fmt.Fprintf(&b, `<div class="slick__slide"><a href="%s"><div data-b-thumb="x"><img decoding="async" class="media__element b-lazy img-responsive" loading="lazy" data-src="%s" src="data:image/svg+xml;charset=utf-8,%%3Csvg%%3E" alt="%s"/></div></a></div>`, esc(path), esc(path), esc(im.Alt))
		}
		b.WriteString(`</div></div>`)
	}
	b.WriteString(`<section class="ar-affected-products ar-section"><h2 class="h2" id="section_2">Affected products</h2>`)
	if d.Header != "" {
		fmt.Fprintf(&b, `<div class="field field--name-field-affected-products-header field--type-text-long field--label-hidden field--item"><p>%s</p></div>`, esc(d.Header))
	}
	b.WriteString(`<table class="table table-bordered">`)
	if d.Caption != "" {
		fmt.Fprintf(&b, `<caption>%s</caption>`, esc(d.Caption))
	}
	var keys []string
	if len(d.Products) > 0 {
		keys = d.Products[0].Fields.Keys
	}
	if thead {
		b.WriteString(`<thead><tr>`)
		for _, k := range keys {
			fmt.Fprintf(&b, `<th><p>%s</p></th>`, esc(HeaderText(k)))
		}
		b.WriteString(`</tr></thead>`)
	}
	b.WriteString(`<tbody>`)
	for _, p := range d.Products {
		b.WriteString(`<tr>`)
		for _, k := range keys {
			fmt.Fprintf(&b, `<td><p>%s</p></td>`, esc(p.Fields.Values[k]))
		}
		b.WriteString(`</tr>`)
	}
	b.WriteString(`</tbody></table></section></main></body></html>`)
	return b.String()
}
