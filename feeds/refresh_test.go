package feeds_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/feeds/feedstest"
	"github.com/rappel-ca/rappel/internal/logtest"
)

// synthetic returns a partial record of source that no upstream has: a
// bundled record a live refresh must remove.
func synthetic(id, typ string) *rappel.Record {
	return &rappel.Record{RecordID: id, RecallID: id[3:], RecallType: typ, Agency: rappel.AgencyHealthCanada,
		Status: rappel.StatusActive, EventDate: "2020-01-02", RecallDate: "2020-01-02",
		Translations: rappel.Translations{EN: &rappel.Translation{Title: "Synthetic " + id}}}
}

func TestRefresher_Refresh_FirstLive(t *testing.T) {
	for _, withRaw := range []bool{false, true} {
		t.Run(map[bool]string{false: "WithoutRaw", true: "WithRaw"}[withRaw], func(t *testing.T) {
			h := newHarness(t)
			h.loadBundle(map[string][]*rappel.Record{
				"hcdump": {synthetic("hc-99999", rappel.TypeFood)},
				"vrdb":   {synthetic("tc-1999999", rappel.TypeVehicle)},
			}, withRaw)
			h.open()
			before := h.records()
			if _, ok := before["hc-99999"]; !ok {
				t.Fatal("the bundle's synthetic record is not loaded")
			}
			// One upstream row differs from the bundle's corpus.
			replace(t, h, "/hc/recalls-en.json", `"Type II", "Last updated": null, "Archived": "0"}`, `"Type II", "Last updated": null, "Archived": "1"}`)
			h.mustRefresh()

			got := h.records()
			if ids := keys(got); !reflect.DeepEqual(ids, golden(t)) {
				t.Fatalf("records after the first live refresh: %v, want the samples' %v (the synthetic ones removed)", ids, golden(t))
			}
			for id, js := range got {
				if js != before[id] && id != "hc-70003" {
					t.Errorf("record %s changed though its upstream rows equal the bundle's corpus", id)
				}
			}
			if r := h.record("hc-70003"); r.Status != rappel.StatusArchived {
				t.Errorf("hc-70003 = %+v, want archived", r)
			}
			for _, source := range []string{"hcdump", "vrdb", "detail"} {
				st := h.state(source)
				if !st.Live || st.LastError != "" || !st.LastSuccess.Equal(h.now) || st.Plugin != h.norm.Active(source) || st.Records == 0 || st.Stale {
					t.Errorf("state of %s = %+v", source, st)
				}
			}
			info, _ := h.store.DatasetInfo(h.ctx)
			if info.Source != "feeds" || !info.UpdatedAt.Equal(h.now) || info.Records != len(got) {
				t.Errorf("dataset info = %+v", info)
			}
			// With the raw records remembered, only the row that differs
			// went through a plugin (its detail documents were fetched
			// again, and were the same).
			_, emitted := h.norm.counts()
			if withRaw && (emitted["hcdump"] != 1 || emitted["vrdb"] != 0 || emitted["detail"] != 0) {
				t.Errorf("records normalized: %v, want only the changed dump row", emitted)
			}
			if !withRaw && (emitted["hcdump"] != 12 || emitted["vrdb"] != 5 || emitted["detail"] != 6) {
				t.Errorf("records normalized: %v, want every one", emitted)
			}

			// A later refresh of an unchanged upstream costs nothing, and a
			// plugin swap finds the raw data it needs.
			h.mustRefresh()
			if runs, _ := h.norm.counts(); len(runs) != 0 {
				t.Errorf("the second refresh ran plugins: %v", runs)
			}
		})
	}
}

func TestRefresher_Refresh_NotModified(t *testing.T) {
	h := newHarness(t)
	h.open()
	h.mustRefresh()
	before := h.records()
	h.norm.counts()
	h.up.ResetHits()

	h.mustRefresh()
	runs, _ := h.norm.counts()
	if len(runs) != 0 {
		t.Errorf("a refresh where nothing changed ran plugins: %v", runs)
	}
	if n := h.up.Hits("/detail/"); n != 0 {
		t.Errorf("%d detail requests, want none: no notice changed", n)
	}
	if n := h.up.Hits("/hc/"); n != 2 {
		t.Errorf("%d dump requests, want 2 conditional ones", n)
	}
	if !reflect.DeepEqual(h.records(), before) {
		t.Error("records changed")
	}
	if st := h.state("hcdump"); !st.LastSuccess.Equal(h.now) {
		t.Errorf("last success %v, want %v: a refresh that found nothing new is a success", st.LastSuccess, h.now)
	}
	info, _ := h.store.DatasetInfo(h.ctx)
	if !info.UpdatedAt.Equal(h.now) {
		t.Errorf("dataset updated_at %v, want it moved to %v", info.UpdatedAt, h.now)
	}

	t.Run("SameBytes", func(t *testing.T) {
		// A 200 with the same bytes (an upstream without validators)
		// costs no parsing either.
		h.up.Set("/tc/vrdb.csv", bytes.Clone(h.up.Doc("/tc/vrdb.csv")))
		h.mustRefresh()
		if runs, _ := h.norm.counts(); len(runs) != 0 {
			t.Errorf("same bytes ran plugins: %v", runs)
		}
	})
}

// newRow is a notice that the samples do not have, with its detail
// documents.
const (
	newRowEN    = `{"NID": "70009", "Title": "Acme brand frozen peas recalled due to Listeria", "URL": "https://recalls-rappels.canada.ca/en/alert-recall/acme-frozen-peas", "Organization": "CFIA", "Product": "Frozen peas", "Issue": "Microbiological - Listeria", "What you should do": "Do not consume the recalled product.", "Category": "Vegetables", "Recall class": "Class 1", "Last updated": null, "Archived": "0"}`
	newRowFR    = `{"NID": "70009", "Titre": "Rappel de pois surgelés de marque Acme en raison de Listeria", "URL": "https://recalls-rappels.canada.ca/fr/avis-rappel/pois-acme", "Organization": "CFIA", "Produit": "Pois surgelés", "Problème": "Microbiologique - Listeria", "Ce que vous devriez faire": "Ne consommez pas le produit rappelé.", "Catégorie": "Légumes", "Classe de rappel": "Classe 1", "Dernière mise à jour": null, "Archivé": "0"}`
	newDetailEN = `{"url": "https://recalls-rappels.canada.ca/en/alert-recall/acme-frozen-peas", "recallId": "70009", "title": "Acme brand frozen peas recalled due to Listeria", "start_date": 1793000000, "date_published": 1793050000, "category": ["Food"], "panels": [{"panelName": "summary", "title": "Summary", "text": "Acme brand frozen peas may be contaminated with Listeria."}, {"panelName": "product_1", "title": "Frozen peas", "text": "<b>Product:</b> Frozen peas<BR/><b>UPC:</b> 0 41798 00145 9<BR/>"}]}`
)

// addRow adds an English and a French row to the dump.
func addRow(h *harness, en, fr string) {
	for path, row := range map[string]string{"/hc/recalls-en.json": en, "/hc/recalls-fr.json": fr} {
		doc := bytes.TrimSpace(h.up.Doc(path))
		doc = append(doc[:len(doc)-1], []byte(",\n"+row+"\n]")...)
		h.up.Set(path, doc)
	}
}

// replace replaces old by new in the upstream document at path.
func replace(t *testing.T, h *harness, path, old, new string) {
	t.Helper()
	doc := h.up.Doc(path)
	if !bytes.Contains(doc, []byte(old)) {
		t.Fatalf("%s holds no %q", path, old)
	}
	h.up.Set(path, bytes.Replace(doc, []byte(old), []byte(new), 1))
}

func TestRefresher_Refresh_Changes(t *testing.T) {
	h := newHarness(t)
	h.open()
	h.mustRefresh()
	before := h.records()
	if _, err := h.store.NewRecalls(h.ctx); err != nil {
		t.Fatal(err)
	}
	h.norm.counts()
	h.up.ResetHits()

	// A new notice with its detail document, and one now archived.
	addRow(h, newRowEN, newRowFR)
	h.up.Set("/detail/en/70009.json", []byte(newDetailEN))
	replace(t, h, "/hc/recalls-en.json", `"Type II", "Last updated": null, "Archived": "0"}`, `"Type II", "Last updated": null, "Archived": "1"}`)
	h.mustRefresh()

	if r := h.record("hc-70009"); r == nil || r.Status != rappel.StatusActive || len(r.ProductList) != 1 || r.EventDate == "" || r.Translations.FR == nil {
		t.Fatalf("new recall = %+v, want it merged from the dump and its detail document", r)
	}
	if r := h.record("hc-70003"); r == nil || r.Status != rappel.StatusArchived {
		t.Fatalf("hc-70003 = %+v, want archived", r)
	}
	after := h.records()
	for id, js := range before {
		if id != "hc-70003" && after[id] != js {
			t.Errorf("record %s changed, but its upstream rows did not", id)
		}
	}
	// Only what changed was normalized: two dump rows, two notices' detail
	// documents, and the detail requests were for those notices only.
	_, emitted := h.norm.counts()
	// 70003's detail documents were fetched again (its row changed) but
	// are the same, so only 70009's went through the plugin.
	if emitted["hcdump"] != 2 || emitted["detail"] != 1 || emitted["vrdb"] != 0 {
		t.Errorf("records normalized again: %v, want hcdump 2, detail 1", emitted)
	}
	if n := h.up.Hits("/detail/"); n != 4 {
		t.Errorf("%d detail requests, want 4 (en and fr of 70003 and 70009)", n)
	}
	batches, err := h.store.NewRecalls(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	last := batches[len(batches)-1]
	// The notice has no dates in the dump: it becomes a record once its
	// detail document is merged in, so the detail source makes it new.
	if last.Source != "detail" || !reflect.DeepEqual(last.RecordIDs, []string{"hc-70009"}) || last.Initial {
		t.Fatalf("last new recalls batch = %+v, want hc-70009 from detail", last)
	}
	// The last refresh's figures, kept though the detail refresh rewrote
	// hcdump's problems afterwards: hcdump's rows of 70003 (archived) and
	// 70009 (new) changed, detail's document of 70009 (70003's are the
	// same), vrdb nothing.
	for source, want := range map[string]int{"hcdump": 2, "detail": 1, "vrdb": 0} {
		if got := h.state(source).LastChanged; got != want {
			t.Errorf("%s changed %d records, want %d", source, got, want)
		}
	}
	for _, st := range h.r.States() {
		for _, p := range st.Problems {
			if strings.Contains(p.Reason, "merging") {
				t.Errorf("%s still reports %+v, though the record merged fine in the end", st.Source, p)
			}
		}
	}

	t.Run("Removed", func(t *testing.T) {
		// A notice gone from the dump goes, with its detail record.
		h.up.Set("/hc/recalls-en.json", bytes.Replace(h.up.Doc("/hc/recalls-en.json"), []byte(",\n"+newRowEN), nil, 1))
		h.up.Set("/hc/recalls-fr.json", bytes.Replace(h.up.Doc("/hc/recalls-fr.json"), []byte(",\n"+newRowFR), nil, 1))
		h.mustRefresh()
		if r := h.record("hc-70009"); r != nil {
			t.Fatalf("hc-70009 still stored: %+v", r)
		}
		parts, _ := h.store.Partials(h.ctx, "detail", []string{"hc-70009"})
		if len(parts) != 0 {
			t.Fatal("the removed notice's detail record is still stored")
		}
	})
}

// fault is one way the upstream or a plugin can go wrong.
type fault struct {
	name   string
	source string
	// apply breaks things; the harness heals the upstream and restores
	// the shipped plugins afterwards.
	apply func(t *testing.T, h *harness)
	// want is in the source's last_error, and reason is its
	// last_error_reason.
	want   string
	reason rappel.FeedFailure
}

var faults = []fault{
	{"Status500", "hcdump", func(t *testing.T, h *harness) { h.up.Fail("/hc/recalls-en.json", feedstest.Fault{Status: 500}) }, "500", rappel.FailureFetch},
	{"Timeout", "vrdb", func(t *testing.T, h *harness) {
		h.setFetcher(200 * time.Millisecond)
		h.up.Fail("/tc/vrdb.csv", feedstest.Fault{Delay: 3 * time.Second})
	}, "Timeout", rappel.FailureFetch},
	{"Truncated", "hcdump", func(t *testing.T, h *harness) { h.up.Fail("/hc/recalls-fr.json", feedstest.Fault{Truncate: true}) }, "ended early", rappel.FailureFetch},
	{"HTML", "hcdump", func(t *testing.T, h *harness) {
		h.up.Set("/hc/recalls-en.json", []byte("<!DOCTYPE html>\n<html><body><h1>Site maintenance</h1></body></html>"))
	}, "HTML", rappel.FailureParse},
	{"RenamedColumns", "vrdb", func(t *testing.T, h *harness) {
		replace(t, h, "/tc/vrdb.csv", `"RECALL_NUMBER_NUM","YEAR"`, `"RECALL_NO","MODEL_YEAR"`)
	}, "RECALL_NUMBER_NUM", rappel.FailurePlugin},
	{"InvalidJSON", "hcdump", func(t *testing.T, h *harness) {
		// As the dump of early 2024: a string left unterminated mid-file.
		replace(t, h, "/hc/recalls-en.json", `"Archived": "0"}`, `"Archived": "0}`)
	}, "the document is not valid JSON at byte", rappel.FailureParse},
	{"EmptyArray", "hcdump", func(t *testing.T, h *harness) {
		h.up.Set("/hc/recalls-en.json", []byte("[]"))
		h.up.Set("/hc/recalls-fr.json", []byte("[]"))
	}, "refusing to empty", rappel.FailureSuspiciousRemoval},
	{"MassRemoval", "vrdb", func(t *testing.T, h *harness) {
		// Keep the header and the rows of one recall of five (rows span
		// lines: their comments have line breaks).
		doc := h.up.Doc("/tc/vrdb.csv")
		cr := csv.NewReader(bytes.NewReader(doc))
		var kept []byte
		for start := int64(0); ; start = cr.InputOffset() {
			row, err := cr.Read()
			if err != nil {
				break
			}
			if start == 0 || row[0] == "2018123" {
				kept = append(kept, doc[start:cr.InputOffset()]...)
			}
		}
		h.up.Set("/tc/vrdb.csv", kept)
	}, "refused as suspicious", rappel.FailureSuspiciousRemoval},
	{"PluginLoops", "vrdb", func(t *testing.T, h *harness) {
		h.norm.host.Timeout = time.Second
		h.norm.Use("vrdb", guests+"loop")
	}, "stopped after", rappel.FailurePlugin},
	{"PluginPanics", "hcdump", func(t *testing.T, h *harness) { h.norm.Use("hcdump", guests+"panic") }, "plugin", rappel.FailurePlugin},
	{"PluginAllocates", "detail", func(t *testing.T, h *harness) { h.norm.Use("detail", guests+"hog") }, "plugin", rappel.FailurePlugin},
	{"PluginGarbage", "hcdump", func(t *testing.T, h *harness) { h.norm.Use("hcdump", guests+"garbage") }, "refused as suspicious", rappel.FailureSuspiciousRemoval},
	{"PluginBadFields", "vrdb", func(t *testing.T, h *harness) { h.norm.Use("vrdb", guests+"badfields") }, "refused as suspicious", rappel.FailureSuspiciousRemoval},
}

// TestRefresher_Refresh_Faults breaks the upstream or a plugin in every way
// the issue lists. Each time the refresh fails, nothing stored changes,
// the source's state says what happened, the new recalls already recorded
// stay, and the next good refresh recovers.
func TestRefresher_Refresh_Faults(t *testing.T) {
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.open()
			h.mustRefresh()
			good := h.records()
			outbox, _ := h.store.NewRecalls(h.ctx)
			prev := h.state(f.source)

			snapshot := map[string][]byte{}
			for _, p := range []string{"/hc/recalls-en.json", "/hc/recalls-fr.json", "/tc/vrdb.csv"} {
				snapshot[p] = h.up.Doc(p)
			}
			f.apply(t, h)
			err := h.refresh()
			if err == nil {
				t.Fatal("the refresh succeeded")
			}
			st := h.state(f.source)
			if !strings.Contains(st.LastError, f.want) || !st.LastAttempt.Equal(h.now) || !st.LastSuccess.Equal(prev.LastSuccess) {
				t.Errorf("state = %+v, want last_error with %q, and the last success kept", st, f.want)
			}
			if st.LastErrorReason != f.reason {
				t.Errorf("last_error_reason = %q, want %q (last_error: %s)", st.LastErrorReason, f.reason, st.LastError)
			}
			t.Logf("last_error: %s", st.LastError)
			if !reflect.DeepEqual(h.records(), good) {
				t.Error("records changed after a failed refresh")
			}
			if got, _ := h.store.NewRecalls(h.ctx); !reflect.DeepEqual(got, outbox) {
				t.Errorf("new recalls = %+v, want %+v", got, outbox)
			}
			// Three intervals without success make the source stale.
			h.now = h.now.Add(3 * h.r.Interval)
			if !h.state(f.source).Stale {
				t.Error("not stale after three intervals without success")
			}

			h.up.Heal()
			for p, b := range snapshot {
				if !bytes.Equal(h.up.Doc(p), b) {
					h.up.Set(p, b)
				}
			}
			h.setFetcher(5 * time.Second)
			for source, pkg := range shipped {
				h.norm.Use(source, pkg)
			}
			h.mustRefresh()
			if st := h.state(f.source); st.LastError != "" || st.LastErrorReason != "" || !st.LastSuccess.Equal(h.now) || st.Stale {
				t.Errorf("after recovery state = %+v", st)
			}
			if !reflect.DeepEqual(h.records(), good) {
				t.Error("records differ after recovering")
			}
		})
	}
}

// TestRefresher_Refresh_BadRecords runs a plugin whose records break the
// record's rules: each is reported with its reason and not stored.
func TestRefresher_Refresh_BadRecords(t *testing.T) {
	h := newHarness(t)
	h.r.Sources = h.r.Sources[:1] // hcdump alone
	h.norm.Use("hcdump", guests+"badfields")
	h.open()
	h.mustRefresh()
	if ids := keys(h.records()); !reflect.DeepEqual(ids, []string{"hc-1"}) {
		t.Fatalf("records %v, want only the good hc-1", ids)
	}
	st := h.state("hcdump")
	var reasons strings.Builder
	for _, p := range st.Problems {
		reasons.WriteString(p.RecordID + ": " + p.Reason + "\n")
	}
	if st.Rejected != 4 {
		t.Errorf("rejected = %d, want 4:\n%s", st.Rejected, reasons.String())
	}
	for _, want := range []string{"class_9", "Nobody", "2024-02-30", "kryptonite"} {
		if !strings.Contains(reasons.String(), want) {
			t.Errorf("no problem mentions %q:\n%s", want, reasons.String())
		}
	}
}

// TestRefresher_Refresh_PluginSwap swaps a plugin: the next refresh
// normalizes every record with it, though the upstream did not change.
func TestRefresher_Refresh_PluginSwap(t *testing.T) {
	h := newHarness(t)
	h.open()
	h.mustRefresh()
	title := h.record("tc-2018123").Translations.EN.Title
	h.norm.Use("hcdump", guests+"upper")
	h.norm.counts()
	h.mustRefresh()
	if st := h.state("hcdump"); st.Plugin != h.norm.Active("hcdump") || st.LastError != "" {
		t.Fatalf("state %+v, want the new plugin active", st)
	}
	if got := h.record("tc-2018123").Translations.EN.Title; got != strings.ToUpper(title) {
		t.Fatalf("title %q, want the new plugin's %q", got, strings.ToUpper(title))
	}
	if _, emitted := h.norm.counts(); emitted["hcdump"] != 12 {
		t.Errorf("the new plugin normalized %d records, want every one of the 12 rows", emitted["hcdump"])
	}
}

// TestRefresher_Refresh_SwapWithoutData swaps the detail plugin on a node
// whose detail records came with the bundle, which holds their documents'
// hashes but not the documents: the new plugin cannot run on them at once,
// so they are fetched again, and normalized at the next refresh; meanwhile
// the records stay as they were.
func TestRefresher_Refresh_SwapWithoutData(t *testing.T) {
	h := newHarness(t)
	h.loadBundle(nil, true)
	h.open()
	h.mustRefresh()
	good := h.records()
	h.norm.counts()
	h.up.ResetHits()

	// The stored partial records now look made by another plugin.
	st, err := h.store.SourceState(h.ctx, "detail")
	if err != nil {
		t.Fatal(err)
	}
	st.Plugin = "an-older-plugin"
	if err := h.store.ApplySource(h.ctx, &rappel.SourceChange{State: st}); err != nil {
		t.Fatal(err)
	}
	h.mustRefresh()
	if runs, _ := h.norm.counts(); runs["detail"] != 0 {
		t.Errorf("the detail plugin ran %d times without documents", runs["detail"])
	}
	if !reflect.DeepEqual(h.records(), good) {
		t.Error("records changed")
	}
	h.mustRefresh()
	if _, emitted := h.norm.counts(); emitted["detail"] != 6 {
		t.Errorf("the detail plugin normalized %d notices after fetching them, want 6", emitted["detail"])
	}
	// en and fr of the 6 notices with documents, and of the 2 the bundle
	// knew to have none: known only by hash, all are asked again.
	if n := h.up.Hits("/detail/"); n != 16 {
		t.Errorf("%d detail requests, want 16 (en and fr of 8 notices)", n)
	}
	if !reflect.DeepEqual(h.records(), good) {
		t.Error("records changed, though the documents are the same")
	}
	if st := h.state("detail"); st.LastError != "" || st.Plugin != h.norm.Active("detail") {
		t.Errorf("detail state = %+v", st)
	}
}

// TestRefresher_Run_FailureLoggedOnce runs the refresh loop while a source
// fails: the failure is one line, a warning naming the source, not that
// warning and then the refresh's joined error again at error.
func TestRefresher_Run_FailureLoggedOnce(t *testing.T) {
	h := newHarness(t)
	logs := &logtest.Buffer{}
	h.r.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	h.up.Fail("/hc/recalls-en.json", feedstest.Fault{Status: 500})
	h.open()
	ctx, cancel := context.WithCancel(h.ctx)
	done := make(chan error, 1)
	go func() { done <- h.r.Run(ctx) }()
	for deadline := time.Now().Add(time.Minute); !strings.Contains(logs.String(), `"msg":"refresh done"`); {
		if time.Now().After(deadline) {
			t.Fatalf("no refresh done within a minute:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var failures []string
	for line := range strings.Lines(logs.String()) {
		if strings.Contains(line, "500 Internal Server Error") {
			failures = append(failures, line)
		}
	}
	if len(failures) != 1 || !strings.Contains(failures[0], `"source":"hcdump"`) || !strings.Contains(failures[0], `"level":"WARN"`) {
		t.Errorf("a source's failure logged %d times, want once, naming the source:\n%s", len(failures), strings.Join(failures, ""))
	}
}
