package page_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest/guesttest"
)

// realPages is the directory of real page evidence, under ../shared/real.
const realPages = "pages"

// pageName finds a real file's notice and language in its name
// ("…-page-82165-en.html", "…-nid48704-fr.html").
var pageName = regexp.MustCompile(`(?:page-|nid)(\d+)-(en|fr)\.html$`)

// readRealPages reads every .html file of the real evidence: the recall
// pages by their notice (lang/NID.html), and the other HTML (a search
// result row) under made-up numbers, as a node could be handed them. It
// returns the pages by name, and the names of those that are no recall
// page.
func readRealPages(t *testing.T) (pages map[string]string, notPages map[string]string) {
	t.Helper()
	dir := guesttest.RealDir(t, realPages)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	pages, notPages = map[string]string{}, map[string]string{}
	other := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".html") {
			continue
		}
		b := guesttest.RealSample(t, filepath.Join(realPages, e.Name()))
		name := ""
		if m := pageName.FindStringSubmatch(e.Name()); m != nil {
			name = m[2] + "/" + m[1] + ".html"
		} else {
			other++
			name = "en/" + strconv.Itoa(other) + ".html"
			notPages[name] = e.Name()
		}
		pages[name] = string(b)
	}
	if len(pages)-len(notPages) < 3 {
		t.Fatalf("%s holds %d recall pages; the evidence has at least 3", dir, len(pages)-len(notPages))
	}
	return pages, notPages
}

// TestRealPages reads every HTML file of the real evidence through the
// shipped plugin: each recall page gives its notice's record, and HTML
// that is no recall page is a problem naming it, never a record.
func TestRealPages(t *testing.T) {
	pages, notPages := readRealPages(t)
	v := run(t, pages)
	recs := byID(v)
	for name := range pages {
		nid := strings.TrimSuffix(filepath.Base(name), ".html")
		if file, ok := notPages[name]; ok {
			if recs["hc-"+nid] != nil {
				t.Errorf("%s (%s) is no recall page but gave a record", name, file)
			}
			if len(problemsWith(v, name, "no recall page")) == 0 {
				t.Errorf("%s (%s) is no recall page, and no problem says so; problems %v", name, file, v.Problems)
			}
			continue
		}
		if recs["hc-"+nid] == nil {
			t.Errorf("the real page %s gave no record; problems %v", name, v.Problems)
		}
	}
	for _, p := range v.Problems {
		if p.RecordID == "hc-82165" || p.RecordID == "hc-48704" {
			t.Errorf("problem with a complete real page: %s", p.Reason)
		}
	}
	t.Run("82165", func(t *testing.T) { want82165(t, recs["hc-82165"]) })
	t.Run("82667", func(t *testing.T) { want82667(t, recs["hc-82667"]) })
	t.Run("48704", func(t *testing.T) { want48704(t, recs["hc-48704"]) })
}

// want82165 checks every field of the complete live page, NID 82165.
func want82165(t *testing.T, got *rappel.Record) {
	if got == nil {
		t.Fatal("no record")
	}
	const img = "https://recalls-rappels.canada.ca/sites/default/files/styles/x_large/public/alert/recall/82165/"
	want := &rappel.Record{
		RecordID: "hc-82165", RecallID: "82165", Agency: rappel.AgencyHealthCanada,
		EventDate: "2026-06-05", RecallDate: "2026-06-05",
		Translations: rappel.Translations{EN: &rappel.Translation{
			Title:              "Cosyland Kids Kitchen Step Stools recalled due to fall and entrapment hazards",
			ProductDescription: "This recall involves Cosyland Kids Kitchen Step Stools, model #CS0003. The tower stools were sold in natural bamboo, and measure about 16 inches deep by 18 inches wide and 35 inches tall. “COSYLAND” and warning labels are visible along the top rails.",
			HazardDescription:  "The recalled Kids Kitchen Step Stools can collapse or tip over while in use, and a child’s torso can fit through the openings on the front and back sides, posing a risk of serious injury and death due to tip over, fall and entrapment hazards. As of June 1, 2026, the company has received no reports of incident or injury in Canada. In the United States, the company has received 25 reports of incidents involving stability issues and falls and 8 reports of injuries ranging from scrapes and contusions to a fractured arm.",
			WhatToDo:           "Consumers should immediately stop using the recalled products and store them away from children until repaired. Contact Wan Yi for repair parts, which include protective nets, stabilizing feet, and installation instructions. The firm will mail the repair parts directly to consumers free of charge. For more information, consumers can contact Wan Yi by telephone at 866-677-3889, between 9 a.m. and 5 p.m. PT, Monday to Friday, by email at customerservice-ca@cosyland.com visit the company website at https://cosyland.com/en-ca/pages/recall or www.cosyland.com and click on “Product Recalls” at the top of the page for more information. Please note that the Canada Consumer Product Safety Act prohibits recalled products from being redistributed, sold or even given away in Canada. Health Canada would like to remind consumers to report any health or safety incidents related to the use of this product or any other consumer product or cosmetic by filling out the Consumer Product Incident Report Form. This recall is also posted on the OECD Global Portal on Product Recalls website. You can visit this site for more information on other international consumer product recalls.",
		}},
		URLEn:                "https://recalls-rappels.canada.ca/en/alert-recall/cosyland-kids-kitchen-step-stools-recalled-due-fall-and-entrapment-hazards",
		URLFr:                "https://recalls-rappels.canada.ca/fr/avis-rappel/marchepied-cuisine-pour-enfants-cosyland-rappele-en-raison-risques-chute-et-coincement",
		AlertType:            "Consumer product recall",
		IdentificationNumber: "RA-82165",
		Categories:           []string{"Consumer products", "Household items", "Furniture and furnishings"},
		ProductList:          []rappel.Product{{Name: "Cosyland Kids Kitchen Step Stools"}},
		DateModified:         "2026-06-05",
		LastUpdated:          "2026-06-05",
		Images: []rappel.Image{
			{URL: img + "Image1.jpg?itok=ELWGAyCx", Title: "Front of product"},
			{URL: img + "Image2.png?itok=Hlbtzf4i", Title: "Side of product"},
		},
		ImageURL:       img + "Image1.jpg?itok=ELWGAyCx",
		RecallingFirm:  "SuzhouGongYeYuanQu Wan Yi Shen Jia MaoYiShangHang",
		Manufacturer:   "Fujian Zhenghe Xingda Industry and Trade Co., Ltd.",
		PlaceOfOrigin:  "Manufactured in China",
		UnitsSold:      "The company reported that 18 units of the affected products were sold in Canada.",
		TimePeriodSold: "The affected products were sold on Amazon.ca from June 2024 to June 2025.",
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("record of NID 82165:\n got %s\nwant %s", g, w)
	}
}

// want82667 checks the trimmed live food page: its table, distribution,
// recall class, recall date, RA number and CFIA reference.
func want82667(t *testing.T, got *rappel.Record) {
	if got == nil {
		t.Fatal("no record")
	}
	prods := []rappel.Product{{Name: "Go! Beanz Roasted Broadbeans Ketchup", LotCodes: []string{"Best before: JUN/14/2028", "LOT: JSCA26005"},
		// Read by their own labels, though the column is the barcodes'.
		// Its text is the lot codes, which Assemble gives it.
		Applicability: &rappel.Applicability{Lots: []string{"JSCA26005"}, BestBefore: []rappel.DateRange{{From: "2028-06-14", To: "2028-06-14"}}}}}
	checks := []struct {
		field     string
		got, want any
	}{
		{"recall_type", got.RecallType, rappel.TypeFood},
		{"agency", got.Agency, rappel.AgencyCFIA},
		{"event_date (Recall date)", got.EventDate, "2026-09-22"},
		{"recall_date (Original published date)", got.RecallDate, "2026-09-25"},
		{"last_updated", got.LastUpdated, "2026-09-24"},
		{"title", got.Translations.EN.Title, "Go! Beanz brand Roasted Broadbeans recalled due to undeclared milk"},
		{"hazard", got.Translations.EN.HazardDescription, "Recalled due to undeclared milk."},
		{"what to do (the summary's)", got.Translations.EN.WhatToDo, "Do not use, sell, serve or distribute the affected products."},
		{"alert_type", got.AlertType, "Notification"},
		{"allergens (Issue)", got.Allergens, []string{"milk"}},
		{"distribution", got.Distribution, []string{"New Brunswick", "Ontario"}},
		{"hazard_class", got.HazardClass, "class_3"},
		{"identification_number", got.IdentificationNumber, "RA-82667"},
		{"cfia_id", got.CFIAID, "17541"},
		{"recalling_firm", got.RecallingFirm, "Jimmy Sévigny Inc."},
		{"categories", got.Categories, []string{"Food", "Candy, confectionary, snacks and sweeteners"}},
		// The trim put the codes in the UPC column: kept as lot codes, as
		// printed, and reported.
		{"product_list", got.ProductList, prods},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.field, c.got, c.want)
		}
	}
}

// want48704 checks the legacy French page: read alone, it gives the
// notice's French title, its dates, class and product.
func want48704(t *testing.T, got *rappel.Record) {
	if got == nil {
		t.Fatal("no record")
	}
	if got.Translations.FR == nil || got.Translations.FR.Title != "Certains Betteraves Marinées Sucrées de marque Safie's" || got.Translations.EN != nil {
		t.Errorf("translations = %+v", got.Translations)
	}
	if got.EventDate != "2011-12-30" || got.HazardClass != "class_2" || got.Agency != rappel.AgencyCFIA || got.Status != rappel.StatusArchived || got.AlertType != "Notification" {
		t.Errorf("event_date %q, hazard_class %q, agency %q, status %q, alert_type %q", got.EventDate, got.HazardClass, got.Agency, got.Status, got.AlertType)
	}
	if len(got.ProductList) != 1 || got.ProductList[0].Name != "Safie's" || gtin(t, got.ProductList[0].UPC) != "00041798001459" {
		t.Errorf("products = %+v, want Safie's with CUP 0 41798 00145 9", got.ProductList)
	}
}
