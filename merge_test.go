package rappel

import (
	"strings"
	"testing"
	"time"
)

func TestTransportRecallNumber(t *testing.T) {
	for _, tc := range []struct {
		texts []string
		want  string
	}{
		{[]string{"https://wwwapps.tc.gc.ca/Saf-Sec-Sur/7/VRDB-BDRV/search-recherche/detail.aspx?lang=eng&rn=2018123"}, "2018123"},
		{[]string{"https://wwwapps.tc.gc.ca/detail.aspx?rn=2018123&amp;lang=fra"}, "2018123"},
		{[]string{"Transport Canada Recall - 2026432 - FORD"}, "2026432"},
		{[]string{"Transport Canada Recall - 2026432"}, "2026432"},
		{[]string{"\u200b Transport&nbsp;Canada Recall&nbsp;- 2026432 -  FORD "}, "2026432"},
		{[]string{"Rappel de Transports Canada - 2026432 - FORD"}, "2026432"},
		{[]string{"Transport Canada recall no. 2026432"}, "2026432"},
		{[]string{"https://recalls-rappels.canada.ca/en/alert-recall/transport-canada-recall-2026432-ford"}, "2026432"},
		{[]string{"/fr/avis-rappel/rappel-de-transports-canada-2026432-ford"}, "2026432"},
		// Texts are tried in order: the first that names a number wins.
		{[]string{"/fr/node/73841", "Transport Canada Recall - 2026432 - FORD"}, "2026432"},
		{[]string{"https://x/detail.aspx?rn=2019001", "Transport Canada Recall - 2026432"}, "2019001"},
		{[]string{"/fr/node/73841"}, ""},
		{[]string{"https://wwwapps.tc.gc.ca/detail.aspx?lang=eng"}, ""},
		{[]string{"https://wwwapps.tc.gc.ca/detail.aspx?lang=eng&rn=ABC"}, ""},
		{[]string{"https://wwwapps.tc.gc.ca/detail.aspx?lang=eng&rn=-1"}, ""},
		{[]string{"https://wwwapps.tc.gc.ca/detail.aspx?lang=eng&urn=2018123"}, ""},
		{[]string{"https://x/?rn=" + strings.Repeat("1", 21)}, ""},
		{[]string{"Transport Canada Recall - FORD"}, ""},
		{[]string{"Ford F-150: brakes"}, ""},
		{nil, ""},
	} {
		if got := TransportRecallNumber(tc.texts...); got != tc.want {
			t.Errorf("TransportRecallNumber(%q) = %q, want %q", tc.texts, got, tc.want)
		}
	}
}

// FuzzTransportRecallNumber: whatever the dump holds, the number is digits
// that make a valid record_id, and one the text holds.
func FuzzTransportRecallNumber(f *testing.F) {
	f.Add("Transport Canada Recall - 2026432 - FORD")
	f.Add("https://wwwapps.tc.gc.ca/detail.aspx?lang=eng&rn=2018123")
	f.Add("/en/alert-recall/transport-canada-recall-2026432-ford")
	f.Add("Rappel de Transports Canada &#8211; 2026432")
	f.Fuzz(func(t *testing.T, s string) {
		n := TransportRecallNumber(s)
		if n == "" {
			return
		}
		if !isDigits(n) || len(n) > maxRecallDigits || !recordIDPattern.MatchString("tc-"+n) {
			t.Fatalf("TransportRecallNumber(%q) = %q", s, n)
		}
	})
}

func TestIsPlaceholderTitle(t *testing.T) {
	for title, placeholder := range map[string]bool{
		"Transport Canada Recall - 2026432 - FORD":                                                     true,
		"Transport Canada Recall - 2026432 - MERCEDES-BENZ":                                            true,
		"Transport Canada Recall - 2026432":                                                            true,
		"Rappel de Transports Canada - 2026432 - FORD":                                                 true,
		"2018-2019 Ford F-150 and F-250: brake fluid leak":                                             false,
		"Transport Canada Recall - 2026432 - FORD: airbags may not deploy in a crash. See the notice.": false,
		"": false,
	} {
		if got := IsPlaceholderTitle(title); got != placeholder {
			t.Errorf("IsPlaceholderTitle(%q) = %v, want %v", title, got, placeholder)
		}
	}
}

// TestAssemble_DumpOnlyTransportRecall: a Transport Canada recall that
// Health Canada's dump lists and the vehicle database does not is served
// from the dump's row, its last update standing in for its dates; once
// the database lists it, its dates and descriptive title win, though the
// dump is merged first.
func TestAssemble_DumpOnlyTransportRecall(t *testing.T) {
	at := time.Date(2025, 6, 20, 0, 0, 0, 0, time.UTC)
	dump := func() *Record {
		return &Record{RecordID: "tc-2024761", RecallID: "2024761", RecallType: TypeVehicle, Agency: AgencyTransportCanada,
			Status: StatusActive, LastUpdated: "2025-05-02", Translations: Translations{
				EN: &Translation{Title: "Transport Canada Recall - 2024761 - HONDA", ProductDescription: "SUV recalled by HONDA"},
				FR: &Translation{Title: "Rappel de Transports Canada - 2024761 - HONDA"}}}
	}
	recs, problems := Assemble(at, []*Record{dump()})
	if len(problems) != 0 || len(recs) != 1 {
		t.Fatalf("the dump's row alone: %d records, problems %+v", len(recs), problems)
	}
	if r := recs[0]; r.EventDate != "2025-05-02" || r.RecallDate != "2025-05-02" || r.Title(LangEN) != "Transport Canada Recall - 2024761 - HONDA" {
		t.Errorf("the dump's row alone: %+v", r)
	}

	csv := &Record{RecordID: "tc-2024761", RecallID: "2024761", RecallType: TypeVehicle, Agency: AgencyTransportCanada,
		Status: StatusActive, EventDate: "2024-11-28", RecallDate: "2024-11-28", LastUpdated: "2025-01-09", VehicleMake: "HONDA",
		Translations: Translations{EN: &Translation{Title: "HONDA PILOT (2023–2025) – Visual System"}}}
	recs, problems = Assemble(at, []*Record{dump()}, []*Record{csv})
	if len(problems) != 0 || len(recs) != 1 {
		t.Fatalf("with the database: %d records, problems %+v", len(recs), problems)
	}
	r := recs[0]
	if r.EventDate != "2024-11-28" || r.RecallDate != "2024-11-28" || r.Title(LangEN) != "HONDA PILOT (2023–2025) – Visual System" ||
		r.Translations.FR.Title != "Rappel de Transports Canada - 2024761 - HONDA" || r.Translations.EN.ProductDescription != "SUV recalled by HONDA" ||
		r.LastUpdated != "2025-05-02" || r.VehicleMake != "HONDA" {
		t.Errorf("with the database: %+v %+v %+v", r, r.Translations.EN, r.Translations.FR)
	}

	// A record with no date at all is still refused.
	undated := dump()
	undated.LastUpdated = ""
	if recs, problems := Assemble(at, []*Record{undated}); len(recs) != 0 || len(problems) != 1 {
		t.Errorf("an undated record: %d records, problems %+v", len(recs), problems)
	}
}
