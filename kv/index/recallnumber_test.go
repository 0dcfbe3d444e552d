package index

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/rappel-ca/rappel"
)

// TestSnapshot_Search_ManufacturerRecallNumbers searches each number of a
// field that holds several, as Transport Canada writes them: each finds its
// recall, the abbreviated one too, and the field is served as published.
func TestSnapshot_Search_ManufacturerRecallNumbers(t *testing.T) {
	recs := testCorpus(6)
	recs[1].ManufacturerRecallNumber = "CR5350/5351"
	recs[2].ManufacturerRecallNumber = "N222383790 / N222383791"
	recs[3].ManufacturerRecallNumber = "Z-22-04 & Z-22-08"
	recs[4].ManufacturerRecallNumber = "61 91 22RC / 61 92 22RC"
	s := mustBuild(t, recs)
	for q, want := range map[string]string{
		"CR5350": "hc-1", "CR5351": "hc-1", `"CR5350/5351"`: "hc-1",
		"N222383790": "hc-2", "N222383791": "hc-2",
		"Z-22-04": "hc-3", "Z-22-08": "hc-3",
		`"61 92 22RC"`: "hc-4",
	} {
		p := search(t, s, &rappel.Search{Query: mustQuery(t, q), Limit: 10})
		if got := ids(t, p); !slices.Equal(got, []string{want}) {
			t.Errorf("q=%s found %v, want %s", q, got, want)
		}
	}
	p := search(t, s, &rappel.Search{Query: mustQuery(t, "CR5351"), Limit: 10})
	var got []rappel.Record
	if err := json.Unmarshal(p.Results, &got); err != nil || len(got) != 1 || got[0].ManufacturerRecallNumber != "CR5350/5351" {
		t.Errorf("served %s, want manufacturer_recall_number as published (%v)", p.Results, err)
	}
}
