package guest_test

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/detail"
	"github.com/rappel-ca/rappel/plugins/guest/guesttest"
	"github.com/rappel-ca/rappel/plugins/hcdump"
	"github.com/rappel-ca/rappel/plugins/vrdb"
)

// TestAssemble runs the three samples through their normalizers and merges
// them as the host does, in the contract's order: detail, hcdump, vrdb.
func TestAssemble(t *testing.T) {
	fetched := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	det := guesttest.MustRun(t, os.DirFS("../../testdata/detail"), detail.Normalize)
	dump := guesttest.MustRun(t, os.DirFS("../../testdata/hc"), hcdump.Normalize)
	tc := guesttest.MustRun(t, os.DirFS("../../testdata/tc"), vrdb.Normalize)
	recs, problems := rappel.Assemble(fetched, det.Records, dump.Records, tc.Records)
	if problems == nil {
		problems = []rappel.Problem{}
	}
	guesttest.Golden(t, "../../testdata/golden/assembled.json", guesttest.Output{Records: recs, Problems: problems})

	// Every notice of the dump and every recall of the CSV is one record,
	// and each of them is servable.
	if len(problems) != 0 {
		t.Errorf("assembly problems: %+v", problems)
	}
	if len(recs) != 13 {
		t.Errorf("got %d records, want 13 (8 Health Canada, 4 vehicle in both sources, 1 vehicle in the CSV only)", len(recs))
	}
	byID := map[string]*rappel.Record{}
	for _, r := range recs {
		if err := r.Validate(); err != nil {
			t.Errorf("%s: %v", r.RecordID, err)
		}
		if r.FetchedAt != "2025-01-02T03:04:05Z" {
			t.Errorf("%s: fetched_at %q", r.RecordID, r.FetchedAt)
		}
		byID[r.RecordID] = r
	}

	t.Run("VehicleNoticeAndRowsMerge", func(t *testing.T) {
		r := byID["tc-2018123"]
		if r == nil {
			t.Fatal("no tc-2018123")
		}
		// The dump gives the title, URLs, text and last_updated ...
		if r.Translations.EN.Title != "2018-2019 Ford F-150 and F-250: brake fluid leak" ||
			r.URLEn != "https://wwwapps.tc.gc.ca/Saf-Sec-Sur/7/VRDB-BDRV/search-recherche/detail.aspx?lang=eng&rn=2018123" ||
			r.Translations.FR.URL == "" || r.LastUpdated != "2019-01-15" ||
			r.Translations.EN.HazardDescription != "Brake fluid may leak from the master cylinder, reducing braking." {
			t.Errorf("dump fields: %+v %+v", r, r.Translations.EN)
		}
		// ... the CSV the dates and the vehicle fields.
		if r.EventDate != "2018-03-14" || r.RecallDate != "2018-03-14" || r.VehicleMake != "FORD" || r.VehicleModel != "F-150" ||
			len(r.AffectedModels) != 4 || *r.UnitsAffected != 1350 || r.ManufacturerRecallNumber != "18S05" ||
			r.System != "Brakes" || r.Translations.FR.System != "Freins" || r.RecallType != rappel.TypeVehicle || r.RecallID != "2018123" {
			t.Errorf("CSV fields: %+v", r)
		}
	})
	t.Run("VehicleLastUpdatedFallsBackToCSV", func(t *testing.T) {
		if r := byID["tc-2019045"]; r.LastUpdated != "2019-03-05" {
			t.Errorf("tc-2019045 last_updated %q, want the CSV's LAST_UPDATE_DATE", r.LastUpdated)
		}
	})
	t.Run("ArchivedInDumpWins", func(t *testing.T) {
		if r := byID["tc-2021007"]; r.Status != rappel.StatusArchived {
			t.Errorf("tc-2021007 status %q, want archived", r.Status)
		}
	})
	t.Run("CSVOnlyRecallHasFallbackTitle", func(t *testing.T) {
		r := byID["tc-2017500"]
		if r == nil || r.Title(rappel.LangEN) != "CHEVROLET SILVERADO 1500 (2016–2017) – Steering" || r.URLEn != "" {
			t.Errorf("tc-2017500: %+v", r)
		}
	})
	t.Run("DetailDatesWin", func(t *testing.T) {
		r := byID["hc-70002"]
		if r.EventDate != "2023-02-24" || r.RecallDate != "2023-03-10" || r.DateModified != "2023-03-10" || r.RecallID != "70001" {
			t.Errorf("hc-70002: event %s recall %s modified %s recall_id %s", r.EventDate, r.RecallDate, r.DateModified, r.RecallID)
		}
		if r := byID["hc-70001"]; r.EventDate != "2023-02-24" || r.DateModified != "" {
			t.Errorf("hc-70001 (no Last updated in the dump): event %s modified %s", r.EventDate, r.DateModified)
		}
	})
	t.Run("DetailTextFirst", func(t *testing.T) {
		r := byID["hc-70003"]
		// FORMATS.md says the dump's text wins over the detail document's,
		// but also that detail is merged first, field by field; with one
		// precedence for all fields the detail's summary becomes the
		// hazard_description and the dump fills only what it lacks.
		if r.Translations.EN.HazardDescription != "A software error may stop the infusion without sounding an alarm." ||
			r.Translations.EN.URL == "" || r.Category != "Medical devices" || r.HazardClass != "class_2" {
			t.Errorf("hc-70003: %+v %+v", r, r.Translations.EN)
		}
	})
	t.Run("SharedRecallID", func(t *testing.T) {
		var shared []string
		for _, r := range recs {
			if r.RecallID == "70001" {
				shared = append(shared, r.RecordID)
			}
		}
		if !slices.Equal(shared, []string{"hc-70001", "hc-70002"}) {
			t.Errorf("records with recall_id 70001: %v", shared)
		}
	})
}
