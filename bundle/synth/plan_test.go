package synth

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestPlan_Scale(t *testing.T) {
	ref := dayOf(time.Date(2025, 6, 30, 0, 0, 0, 0, time.UTC))
	for _, scale := range []float64{1, 5} {
		g := &generator{seed: 1, ref: ref, scale: scale}
		entries := g.plan()
		counts := make([]int, numTypes)
		rns := map[string]bool{}
		nids := map[int64]bool{}
		for i, e := range entries {
			counts[e.typ]++
			if i > 0 && e.day < entries[i-1].day {
				t.Fatalf("scale %v: the plan is not in date order", scale)
			}
			if e.typ == typeVehicle {
				if rns[e.recallNumber] || e.recallNumber[:4] != strconv.Itoa(e.day.year()) {
					t.Fatalf("scale %v: recall number %s (%s) is repeated or of another year", scale, e.recallNumber, e.day)
				}
				rns[e.recallNumber] = true
			}
			if e.inDump {
				if nids[e.nid] {
					t.Fatalf("scale %v: NID %d repeated", scale, e.nid)
				}
				nids[e.nid] = true
			}
			if e.update && (e.origNID == 0 || e.origNID >= e.nid) {
				t.Fatalf("scale %v: update %d of %d", scale, e.nid, e.origNID)
			}
		}
		for typ, want := range typeTargets {
			if got := float64(counts[typ]); math.Abs(got-want*scale) > 0.03*want*scale {
				t.Errorf("scale %v: %s has %v records, want %v", scale, recallTypeName(typ), got, want*scale)
			}
		}
		if scale == 1 {
			for rn := range rns {
				if len(rn) != 7 {
					t.Fatalf("recall number %s is not YYYYNNN at scale 1", rn)
				}
			}
		}
	}
}

func TestCatalogue(t *testing.T) {
	if _, err := parseCatalogue(vehicleCatalogue); err != nil {
		t.Fatal(err)
	}
	codes := map[byte]bool{}
	for _, c := range vehicleCategories {
		codes[c.code] = true
	}
	for _, mk := range vehicleMakes() {
		if len(mk.models) == 0 {
			t.Errorf("%s has no models", mk.name)
		}
		for _, m := range mk.models {
			if !codes[m.cat] {
				t.Errorf("%s %s: category %c", mk.name, m.name, m.cat)
			}
			for _, rg := range m.ranges {
				if rg[0] < 1975 || rg[1] != 0 && rg[1] < rg[0] {
					t.Errorf("%s %s: years %v", mk.name, m.name, rg)
				}
			}
		}
	}
	// Every category can be drawn for a recall of today, with a defect
	// that fits it; the first, which a draw falls back on, for a recall of
	// the first year too.
	for i, c := range vehicleCategories {
		for _, y := range []int{1991, time.Now().Year()} {
			if y == 1991 && i > 0 {
				continue
			}
			found := false
			for i := range makes {
				found = found || len(eligible(&makes[i], c.code, y-15, y+1, nil)) > 0
			}
			if !found {
				t.Errorf("no model of category %s is sold around %d", c.en, y)
			}
		}
		fits := false
		for _, d := range defects {
			fits = fits || strings.IndexByte(d.cats, c.code) >= 0
		}
		if !fits {
			t.Errorf("no defect strikes category %s", c.en)
		}
	}
}

// TestDefects checks every defect's comment can be written in both of
// Transport Canada's styles.
func TestDefects(t *testing.T) {
	codes := ""
	for _, c := range vehicleCategories {
		codes += string(c.code)
	}
	for _, d := range defects {
		if strings.Trim(d.cats, codes) != "" {
			t.Errorf("%q: categories %q", d.shortEN, d.cats)
		}
		for _, fr := range []bool{false, true} {
			plain, headed := d.comment(fr, false, "Acme"), d.comment(fr, true, "Acme")
			if !strings.Contains(plain, "Correction") || strings.Contains(headed, "Correction") ||
				strings.Count(headed, "\n\n") != 2 || !strings.Contains(headed, "Acme") || strings.Contains(headed, "Dealers will") {
				t.Errorf("%q: comments %q and %q", d.shortEN, plain, headed)
			}
		}
	}
}
