package rappel

import (
	"testing"
	"time"
)

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
