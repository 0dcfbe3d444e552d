package feeds_test

import (
	"encoding/json"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/feeds"
	"github.com/rappel-ca/rappel/feeds/feedstest"
	"github.com/rappel-ca/rappel/plugins/guest"
	"github.com/rappel-ca/rappel/plugins/guest/guesttest"
	"github.com/rappel-ca/rappel/plugins/plugintest"
)

// realOrganizations is what each Organization of the real dump (June 2025)
// makes of a notice: agency and recall type ("" when its Category says).
var realOrganizations = map[string][2]string{
	"TC":                                 {rappel.AgencyTransportCanada, rappel.TypeVehicle},
	"CFIA":                               {rappel.AgencyCFIA, rappel.TypeFood},
	"Medical devices":                    {rappel.AgencyHealthCanada, rappel.TypeMedicalDevice},
	"Consumer product safety":            {rappel.AgencyHealthCanada, rappel.TypeConsumerProduct},
	"Drugs and health products":          {rappel.AgencyHealthCanada, rappel.TypeHealthProduct},
	"Marketed health products":           {rappel.AgencyHealthCanada, rappel.TypeHealthProduct},
	"Controlled substances and cannabis": {rappel.AgencyHealthCanada, rappel.TypeCannabis},
	"Communications and Public Affairs Branch": {rappel.AgencyHealthCanada, ""},
}

// realAllergenLabels are the real dump's Issue labels that name allergens,
// as a reader of the CFIA's notices reads them.
var realAllergenLabels = map[string][]string{
	"Egg": {"egg"}, "Milk": {"milk"}, "Wheat": {"wheat"}, "Soy": {"soy"}, "Fish": {"fish"},
	"Mustard": {"mustard"}, "Gluten": {"gluten"}, "Sesame seeds": {"sesame"}, "Peanut": {"peanut"},
	"Tree nut": {"tree_nut"}, "Sulphites": {"sulphites"}, "Crustacean and shellfish": {"crustacean", "shellfish"},
}

// TestRefresh_RealHCDump serves Health Canada's own dump (June 2025, 1,083
// rows) and Transport Canada's daily extract from an upstream to the
// shipped Wasm plugins, through the refresher, the merge, Pebble, the read
// index and the API over HTTP, and checks every row of the dump: it is
// served, under the agency and recall type its Organization says, with its
// title; every CFIA row whose Issue names allergens has exactly them; and
// every Transport Canada row is a recall, whether or not the day's vehicle
// file lists it.
func TestRefresh_RealHCDump(t *testing.T) {
	dump := guesttest.RealSample(t, "hc-dump-en-2025-06.json")
	vrdb := guesttest.RealSample(t, "tc-vrdb-daily-sample.csv")
	var rows []map[string]string
	if err := json.Unmarshal(dump, &rows); err != nil {
		t.Fatal(err)
	}
	inCSV := map[string]string{} // recall number -> its title's make and model, from the CSV
	for n, r := range readTCRecalls(t, vrdb) {
		inCSV[n] = r.firstMake
	}
	up := feedstest.NewUpstream(t)
	up.Set("/hc/recalls-en.json", dump)
	up.Set("/hc/recalls-fr.json", []byte("[]")) // no French file of that day was kept
	up.Set("/tc/vrdb.csv", vrdb)
	stack := refreshReal(t, map[string]string{"hcdump": hcdumpPkg, "vrdb": vrdbPkg},
		feeds.HCDump(up.URL+"/hc/recalls-en.json", up.URL+"/hc/recalls-fr.json"),
		feeds.VRDB(up.URL+"/tc/vrdb.csv"))
	for _, st := range stack.r.States() {
		t.Logf("%s: %d records, %d rejected, problems %+v", st.Source, st.Records, st.Rejected, st.Problems)
		if st.LastError != "" || st.Rejected != 0 {
			t.Errorf("%s: last_error %q, %d rejected: %+v", st.Source, st.LastError, st.Rejected, st.Problems)
		}
	}
	get := stack.get

	// Every row, served through the API as its record.
	counts := map[string]int{}
	var all struct {
		Count int `json:"count"`
	}
	get("/recall?limit=1", &all)
	for _, row := range rows {
		id, want := realRowWants(t, row, inCSV)
		var rec rappel.Record
		get("/recall/"+id, &rec)
		counts["served"]++
		title := rec.Title(rappel.LangEN)
		if rec.Agency != want.agency || !want.recallType(rec.RecallType) || strings.Join(rec.Allergens, ",") != want.allergens ||
			want.title != "" && title != want.title || want.title == "" && (rappel.IsPlaceholderTitle(title) || !strings.Contains(title, want.make)) {
			t.Errorf("NID %s (%s): served %s %s %q allergens %q, want %+v", row["NID"], id, rec.Agency, rec.RecallType, title, rec.Allergens, want)
		}
		if !rappel.ValidDate(rec.EventDate) {
			t.Errorf("NID %s (%s): event_date %q", row["NID"], id, rec.EventDate)
		}
		switch {
		case row["Organization"] == "TC":
			counts["tc"]++
			if _, ok := inCSV[rec.RecallID]; !ok {
				counts["tc, not in the vehicle file"]++
				if rec.EventDate != row["Last updated"] {
					t.Errorf("%s, which only the dump lists, has event_date %s; its Last updated is %s", id, rec.EventDate, row["Last updated"])
				}
			}
		case want.allergens != "":
			counts["cfia rows naming allergens"]++
		}
	}
	t.Logf("%v; %d records served in all", counts, all.Count)
	if counts["served"] != 1083 || counts["tc"] != 462 || counts["cfia rows naming allergens"] != 47 || all.Count != 1083+len(inCSV)-1 {
		t.Errorf("counts %v, %d records in all; want the 1,083 rows (462 TC, 47 CFIA naming allergens) and the vehicle file's other %d recalls", counts, all.Count, len(inCSV)-1)
	}

	// The abalone "recalled due to undeclared egg" is found by its allergen.
	var page struct {
		Results []rappel.Record `json:"results"`
	}
	get("/recall?allergen=egg&limit=100", &page)
	if !slices.ContainsFunc(page.Results, func(r rappel.Record) bool { return r.RecordID == "hc-77619" }) {
		t.Errorf("/recall?allergen=egg does not find hc-77619")
	}
	// Its advice reads as paragraphs again.
	var rec rappel.Record
	get("/recall/hc-77620?lang=en", &rec)
	if wtd := rec.Translations.EN.WhatToDo; !strings.Contains(wtd, "Verify if your product is affected. Consult your healthcare provider") {
		t.Errorf("hc-77620: what_to_do %q", wtd)
	}
	get("/recall?recall_agency="+url.QueryEscape(rappel.AgencyTransportCanada)+"&limit=1", &all)
	if all.Count != 462+len(inCSV)-1 {
		t.Errorf("%d Transport Canada recalls, want the dump's 462 and the vehicle file's other %d", all.Count, len(inCSV)-1)
	}
}

// realWant is what a row of the real dump must be served as.
type realWant struct {
	agency string
	// types are the recall types the row may have: one, or several when
	// its Organization leaves it to the Category.
	types []string
	// title is the row's own title, or "" when the vehicle file's
	// descriptive title, which names make, must serve.
	title, make string
	allergens   string
}

func (w realWant) recallType(t string) bool { return slices.Contains(w.types, t) }

// realRowWants returns the record_id a real dump row becomes and what the
// record must say, read from the row as the agency wrote it.
func realRowWants(t *testing.T, row map[string]string, inCSV map[string]string) (string, realWant) {
	t.Helper()
	org, ok := realOrganizations[row["Organization"]]
	if !ok {
		t.Fatalf("NID %s: the Organization %q is not one of the real dump's", row["NID"], row["Organization"])
	}
	w := realWant{agency: org[0], types: []string{org[1]}, title: strings.TrimSpace(guest.CleanText(row["Title"]))}
	if org[1] == "" {
		// The communications branch: its Category says the kind.
		w.types = []string{rappel.TypeHealthProduct, rappel.TypeMedicalDevice}
	}
	id := "hc-" + row["NID"]
	if org[1] == rappel.TypeVehicle {
		rn := rappel.TransportRecallNumber(row["URL"], row["Title"])
		if rn == "" {
			t.Fatalf("NID %s: the TC row %q names no recall number", row["NID"], row["Title"])
		}
		id = "tc-" + rn
		if mk, ok := inCSV[rn]; ok {
			w.title, w.make = "", mk
		}
	}
	if org[1] == rappel.TypeFood {
		var names []string
		for _, label := range strings.Split(row["Issue"], " - ") {
			for _, a := range realAllergenLabels[label] {
				if !slices.Contains(names, a) {
					names = append(names, a)
				}
			}
		}
		w.allergens = strings.Join(names, ",")
	}
	return id, w
}

// TestRefresh_HCDump2023 refreshes from a dump written in the vocabulary of
// 2023 to early 2024 (testdata/hc-2023): every row becomes a record, with
// no problem, where the former normalizer skipped them all ("Organization
// \"Health Canada\" is none of …") and refused to empty the source.
func TestRefresh_HCDump2023(t *testing.T) {
	h := newHarness(t)
	h.up.LoadDir(t, "/hc", filepath.Join(plugintest.ModuleRoot(t), "testdata", "hc-2023"))
	h.r.Sources = h.r.Sources[:1] // the dump alone
	h.open()
	h.mustRefresh()
	st := h.state("hcdump")
	ids := keys(h.records())
	want := []string{"hc-68101", "hc-68102", "hc-68103", "hc-68301", "hc-68302", "hc-68303", "hc-68304", "tc-2022187", "tc-2023401"}
	if st.Rejected != 0 || st.LastError != "" || !slices.Equal(ids, want) {
		t.Errorf("records %v, state %+v; want %v and no problem", ids, st, want)
	}
	if r := h.record("tc-2022187"); r == nil || r.Status != rappel.StatusArchived || r.EventDate != "2022-05-19" {
		t.Errorf("tc-2022187 (Transport Canada, Archived Yes, not in any vehicle file): %+v", r)
	}
}
