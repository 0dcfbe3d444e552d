package rappel

import (
	"strings"
	"testing"
)

func TestRegisterAgency(t *testing.T) {
	fda := Agency{Name: "US FDA test", EN: "U.S. Food and Drug Administration", FR: "Food and Drug Administration des États-Unis"}
	if IsAgency(fda.Name) {
		t.Fatalf("%q is known before it is registered", fda.Name)
	}
	r := &Record{RecordID: "fda-f-1", RecallID: "F-1", RecallType: TypeFood, Agency: fda.Name, Status: StatusActive,
		EventDate: "2024-01-02", RecallDate: "2024-01-02", FetchedAt: "2024-01-02T00:00:00Z", Translations: Translations{EN: &Translation{Title: "x"}}}
	if err := r.Validate(); err == nil || !strings.Contains(err.Error(), "is not one of") {
		t.Fatalf("a record of an unknown agency validated: %v", err)
	}
	if err := RegisterAgency(fda); err != nil {
		t.Fatal(err)
	}
	if err := r.Validate(); err != nil {
		t.Fatalf("a record of a registered agency is refused: %v", err)
	}
	if v := KnownAgencies(); !v.Has(fda.Name) || v[0] != AgencyCFIA || len(v) < 4 {
		t.Fatalf("KnownAgencies = %v", v)
	}
	// Registering again updates the names; a built-in's are kept.
	fda.FR = "FDA (États-Unis)"
	if err := RegisterAgency(fda); err != nil {
		t.Fatal(err)
	}
	if err := RegisterAgency(Agency{Name: AgencyCFIA, EN: "x", FR: "y"}); err != nil {
		t.Fatal(err)
	}
	for _, a := range AllAgencies() {
		if a.Name == fda.Name && a.FR != fda.FR || a.Name == AgencyCFIA && a.EN != "Canadian Food Inspection Agency" {
			t.Fatalf("after re-registering: %+v", a)
		}
	}
	for _, bad := range []Agency{
		{Name: "us fda TEST", EN: "a", FR: "b"},   // folds to a known one
		{Name: "health-canada", EN: "a", FR: "b"}, // folds to a built-in
		{Name: "X", EN: "a", FR: "b"},
		{Name: " FDA", EN: "a", FR: "b"},
		{Name: "FDA;drop", EN: "a", FR: "b"},
		{Name: "New agency", EN: "a"},
		{Name: "New agency", EN: "a", FR: "b\x00"},
	} {
		if err := RegisterAgency(bad); err == nil {
			t.Errorf("RegisterAgency(%+v) = nil", bad)
		} else if !strings.Contains(err.Error(), bad.Name) && bad.Name != "" {
			t.Errorf("RegisterAgency(%+v): %v does not name the agency", bad, err)
		}
	}
}

func FuzzAgencyValidate(f *testing.F) {
	f.Add("FDA", "U.S. Food and Drug Administration", "FDA des États-Unis")
	f.Add("", "", "")
	f.Fuzz(func(t *testing.T, name, en, fr string) {
		a := Agency{Name: name, EN: en, FR: fr}
		if err := a.Validate(); err == nil {
			if foldName(name) == "" {
				t.Fatalf("%q validated with nothing a filter could match", name)
			}
		} else if err.Error() == "" {
			t.Fatal("an empty error")
		}
	})
}
