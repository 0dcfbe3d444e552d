package plugins_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins"
	"github.com/rappel-ca/rappel/plugins/plugintest"
)

// heldForApproval returns source's candidate held for approval, or nil.
func heldForApproval(tb testing.TB, r *plugins.Registry, source string) *plugins.CandidateReport {
	tb.Helper()
	for _, c := range report(tb, r, source).Candidates {
		if c.State == "held" && c.Reason == "awaiting_approval" {
			return &c
		}
	}
	return nil
}

// A candidate that keeps every record_id but says every recall carries no
// risk passes the id and refusal checks; the content gate holds it, with
// what it changed, until its digest is approved, and approving a wrong
// digest changes nothing.
func TestRegistry_HoldsRewritingCandidate(t *testing.T) {
	dir := t.TempDir()
	r := MustOpenRegistry(t, MustOpenHost(t), dir)
	bundled := mustPrime(t, r, hcInput(t))
	norisk := plugintest.Build(t, guests+"norisk")
	sha := plugins.SHA256(norisk)
	plugintest.Install(t, dir, "hcdump", norisk)
	r.Scan(context.Background())

	if got := r.Active("hcdump"); got != bundled.Plugin {
		t.Fatalf("active after the scan = %s, want the bundled plugin still", got)
	}
	h := heldForApproval(t, r, "hcdump")
	if h == nil || h.SHA256 != sha || h.Diff == nil || !strings.Contains(h.Why, "hazard_description") {
		t.Fatalf("candidates = %+v, want norisk held for approval", report(t, r, "hcdump").Candidates)
	}
	fields := map[string]int{}
	for _, f := range h.Diff.Fields {
		fields[f.Field] = f.Changed
	}
	if n := len(bundled.Records); h.Diff.Compared != n || fields["hazard_description"] != n || fields["title_en"] != 0 || h.Diff.Lost != 0 {
		t.Fatalf("diff = %+v, want every hazard of %d records changed and no title", h.Diff, n)
	}
	if out := mustNormalize(t, r, hcInput(t)); out.Plugin != bundled.Plugin {
		t.Fatalf("a run while held used %s", out.Plugin)
	}
	// /health says so too (FeedState.PluginHeld).
	if h := r.Holding("hcdump"); !strings.Contains(h, "held for approval") || !strings.Contains(h, sha[:12]) {
		t.Fatalf("Holding = %q", h)
	}

	if err := r.Approve(context.Background(), "hcdump", strings.Repeat("0", 64)); !errors.Is(err, plugins.ErrNotHeld) {
		t.Fatalf("approving another digest: %v, want ErrNotHeld", err)
	}
	if err := r.Approve(context.Background(), "hcdump", sha); err != nil {
		t.Fatalf("approving the held digest: %v", err)
	}
	if got := r.Active("hcdump"); got != sha {
		t.Fatalf("active after approval = %s, want %s", got, sha)
	}
	if heldForApproval(t, r, "hcdump") != nil || r.Holding("hcdump") != "" {
		t.Fatalf("still held after approval: %q", r.Holding("hcdump"))
	}
	out := mustNormalize(t, r, hcInput(t))
	if out.Plugin != sha || out.Records[0].Translations.EN.HazardDescription != "No safety risk. No action is needed." {
		t.Fatalf("a run after approval: plugin %s, hazard %q", out.Plugin, out.Records[0].Translations.EN.HazardDescription)
	}
	if ev := r.Report().History; len(ev) != 2 || ev[0].Event != "activated" || ev[1].Event != "held" {
		t.Fatalf("history = %+v, want held then activated", ev)
	}
}

// A candidate that makes the same records (here one that also logs) goes
// live at once: the gate holds only what changes content.
func TestRegistry_OrdinaryCandidateGoesLive(t *testing.T) {
	dir := t.TempDir()
	r := MustOpenRegistry(t, MustOpenHost(t), dir)
	mustPrime(t, r, hcInput(t))
	chatty := plugintest.Build(t, guests+"chatty")
	plugintest.Install(t, dir, "hcdump", chatty)
	r.Scan(context.Background())
	if got := r.Active("hcdump"); got != plugins.SHA256(chatty) || heldForApproval(t, r, "hcdump") != nil {
		t.Fatalf("active = %s, candidates %+v, want chatty live", got, report(t, r, "hcdump").Candidates)
	}
}

func record(id, hazard string, units int) *rappel.Record {
	return &rappel.Record{RecordID: id, Agency: "HC", Translations: rappel.Translations{EN: &rappel.Translation{Title: "t " + id, HazardDescription: hazard}}, UnitsAffected: &units}
}

func TestDiff(t *testing.T) {
	var active, candidate []*rappel.Record
	for i := range 60 {
		id := string(rune('a'+i/26)) + string(rune('a'+i%26))
		active = append(active, record(id, "risk", 5))
		c := record(id, "risk", 5)
		if i < 2 {
			c.Translations.EN.HazardDescription = "fixed"
		}
		if i == 3 {
			c.UnitsAffected = nil
		}
		if i != 59 {
			candidate = append(candidate, c)
		}
	}
	candidate = append(candidate, record("zz", "new", 1))
	d := plugins.Diff(active, candidate)
	got := map[string]plugins.FieldChange{}
	for _, f := range d.Fields {
		got[f.Field] = f
	}
	if d.Compared != 59 || d.Gained != 1 || d.Lost != 1 || d.GainedExamples[0] != "zz" || d.LostExamples[0] != "ch" {
		t.Fatalf("diff = %+v", d)
	}
	if h := got["hazard_description"]; h.Changed != 2 || strings.Join(h.Examples, ",") != "aa,ab" || got["units_affected"].Changed != 1 || got["title_en"].Changed != 0 {
		t.Fatalf("fields = %+v", d.Fields)
	}
	if why := d.Exceeds(0.05); why != "" {
		t.Fatalf("2 of 59 exceeds 5%%: %s", why)
	}
	if why := d.Exceeds(0.03); !strings.Contains(why, "hazard_description of 2 of the 59") {
		t.Fatalf("2 of 59 against 2%%: %q", why)
	}
}
