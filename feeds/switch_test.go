package feeds_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/feeds/feedstest"
	"github.com/rappel-ca/rappel/kv"
)

// generated returns a partial record of source for id carrying made-up
// values in every field a generated bundle fills: a record_id the upstream
// also has, as when the bundle's ids overlap the agencies' NIDs.
func generated(id, typ string) *rappel.Record {
	r := synthetic(id, typ)
	r.Translations.EN.Title = "Generated Helix Wheelchairs recalled due to risk of breakage"
	r.ProductList = []rappel.Product{{Name: "Generated Helix chair", UPC: "6906798336380"}}
	r.Images = []rappel.Image{{URL: "https://example.invalid/generated.jpg"}}
	return r
}

// TestRefresher_Switch is the first live refresh over a generated bundle
// whose record_ids are the upstream's own: every generated value is gone in
// the write that installs the real data, whatever source made it and
// whether or not that source has refreshed, and nothing is announced.
func TestRefresher_Switch(t *testing.T) {
	h := newHarness(t)
	h.kind = rappel.DatasetSynthetic
	h.loadBundle(map[string][]*rappel.Record{
		"hcdump": {synthetic("hc-99999", rappel.TypeFood)},
		"vrdb":   {synthetic("tc-1999999", rappel.TypeVehicle)},
		// hc-70005 has no detail document upstream (404), hc-70001 has
		// one: neither keeps the bundle's.
		"detail": {generated("hc-70005", rappel.TypeFood), generated("hc-70001", rappel.TypeFood)},
	}, true)
	h.open()
	if r := h.record("hc-70005"); len(r.ProductList) == 0 || r.ProductList[0].UPC != "6906798336380" {
		t.Fatalf("the bundle's generated detail is not loaded: %+v", r.ProductList)
	}
	gen0, _, err := h.store.ChangeSeq(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Only the dump can switch: with its upstream down, the vehicle file
	// does, and the detail source waits.
	for _, p := range []string{"/hc/recalls-en.json", "/hc/recalls-fr.json"} {
		h.up.Fail(p, feedstest.Fault{Status: 500})
	}
	_ = h.refresh() // fails for the dump, by design
	h.up.Heal()
	if st := h.state("detail"); st.Live || !strings.Contains(st.LastError, "Waiting") {
		t.Errorf("detail over synthetic data: %+v, want it waiting for the switch", st)
	}
	if st := h.state("vrdb"); !st.Live {
		t.Errorf("vrdb did not switch: %+v", st)
	}
	if r, err := h.store.Record(h.ctx, "hc-70005"); err == nil {
		t.Errorf("after the vehicle file's switch hc-70005 is still served (%q): no live source has listed it", r.Translations.EN.Title)
	}
	h.mustRefresh()

	got := h.records()
	if ids := keys(got); !reflect.DeepEqual(ids, golden(t)) {
		t.Fatalf("records after the switch: %v, want the samples' %v", ids, golden(t))
	}
	for id, js := range got {
		for _, s := range []string{"Generated", "Synthetic", "6906798336380", "generated.jpg"} {
			if strings.Contains(js, s) {
				t.Errorf("record %s still carries the generated %q: %s", id, s, js)
			}
		}
	}
	info, _ := h.store.DatasetInfo(h.ctx)
	if info.Kind != rappel.DatasetAgencies || info.Synthetic() || info.Source != "feeds" || info.Records != len(got) {
		t.Errorf("dataset info after the switch = %+v", info)
	}
	// No longer the bundle's: a read index must not take the bundle's
	// embedded segment for these records (TestFleet/CatchUp).
	if info.Bundle != "" {
		t.Errorf("after the switch the dataset still names the bundle %q", info.Bundle)
	}
	for _, source := range []string{"hcdump", "vrdb", "detail"} {
		if st := h.state(source); !st.Live || st.LastError != "" || st.Records == 0 {
			t.Errorf("state of %s = %+v", source, st)
		}
	}
	gen1, _, err := h.store.ChangeSeq(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if gen1 == gen0 {
		t.Errorf("the change log is still at generation %d: the switch must start a new one", gen0)
	}
	// A new dataset, not news: no alert batch to match, no webhook event
	// but the sources' Initial snapshots, which announce nothing.
	batches, err := h.store.NewRecalls(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range batches {
		if !b.Initial {
			t.Errorf("the switch queued new recalls for alerts: %+v", b)
		}
	}
	events, err := h.store.RecordEvents(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if !e.Initial && !e.Empty() {
			t.Errorf("the switch queued record events for webhooks: %+v", e)
		}
	}

	// After it, refreshes diff as ever: one changed row, one update.
	h.norm.counts()
	replace(t, h, "/hc/recalls-en.json", `"Type II", "Last updated": null, "Archived": "0"}`, `"Type II", "Last updated": null, "Archived": "1"}`)
	h.mustRefresh()
	if _, emitted := h.norm.counts(); emitted["hcdump"] != 1 || emitted["vrdb"] != 0 {
		t.Errorf("after the switch a one-row change normalized %v, want one dump row", emitted)
	}
}

// writes is the real store, counting the writes that change records.
type writes struct {
	*kv.Store
	replaced int
	applied  []string // sources whose ApplySource wrote records
}

func (w *writes) Replace(ctx context.Context, recs []*rappel.Record, partials map[string][]*rappel.Record, raw map[string][]rappel.RawRecord, states []rappel.SourceState, info rappel.DatasetInfo) error {
	w.replaced++
	return w.Store.Replace(ctx, recs, partials, raw, states, info)
}

func (w *writes) ApplySource(ctx context.Context, c *rappel.SourceChange) error {
	if len(c.PutRecords)+len(c.DeleteRecords) > 0 {
		w.applied = append(w.applied, c.State.Feed.Source)
	}
	return w.Store.ApplySource(ctx, c)
}

// TestRefresher_SwitchTogether: with every upstream up, the dump and the
// vehicle file switch in the same write, so that no reader sees the
// vehicle recalls alone between the two.
func TestRefresher_SwitchTogether(t *testing.T) {
	h := newHarness(t)
	h.kind = rappel.DatasetSynthetic
	h.loadBundle(map[string][]*rappel.Record{"hcdump": {synthetic("hc-99999", rappel.TypeFood)}}, true)
	w := &writes{Store: h.store}
	h.r.Store = w
	h.open()
	h.mustRefresh()
	if w.replaced != 1 {
		t.Errorf("the switch took %d replacing writes, want 1", w.replaced)
	}
	for _, source := range w.applied {
		if source != "detail" {
			t.Errorf("%s wrote records after the switch in the same refresh: it should have switched with the others", source)
		}
	}
	for _, source := range []string{"hcdump", "vrdb"} {
		if st := h.state(source); !st.Live || st.LastError != "" || st.Records == 0 {
			t.Errorf("state of %s after the switch = %+v", source, st)
		}
	}
	if ids := keys(h.records()); !reflect.DeepEqual(ids, golden(t)) {
		t.Fatalf("records after the switch: %v, want the samples' %v", ids, golden(t))
	}
}
