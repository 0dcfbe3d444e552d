package feeds_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"unicode/utf16"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/feeds"
	"github.com/rappel-ca/rappel/kv/index"
)

// reserializeJSON writes a dump again as another JSON writer would, with
// the same content: keys in reverse order, every "/" and non-ASCII
// character escaped (as the 2025 dump is written, and earlier ones were
// not), CRLF and spaces around the punctuation, and HTML entities spelled
// otherwise (&nbsp; as &#160;, &amp; as &#x26;).
func reserializeJSON(t testing.TB, doc []byte) []byte {
	t.Helper()
	var rows []any
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&rows); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.WriteString("[\r\n")
	for i, row := range rows {
		if i > 0 {
			b.WriteString(" ,\r\n")
		}
		writeOtherJSON(&b, row)
	}
	b.WriteString("\r\n]\r\n")
	out := b.Bytes()
	if bytes.Equal(out, doc) {
		t.Fatal("the re-serialized dump has the same bytes")
	}
	return out
}

var otherEntities = strings.NewReplacer("&nbsp;", "&#160;", "&amp;", "&#x26;")

func writeOtherJSON(b *bytes.Buffer, v any) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Sort(sort.Reverse(sort.StringSlice(keys)))
		writeSpaced(b, "{ ", " }", len(keys), func(i int) {
			writeEscapedString(b, keys[i])
			b.WriteString(" : ")
			writeOtherJSON(b, v[keys[i]])
		})
	case []any:
		writeSpaced(b, "[ ", " ]", len(v), func(i int) { writeOtherJSON(b, v[i]) })
	case string:
		writeEscapedString(b, otherEntities.Replace(v))
	default: // json.Number, bool, nil
		js, _ := json.Marshal(v)
		b.Write(js)
	}
}

// writeSpaced writes n items between open and close, with " , " between.
func writeSpaced(b *bytes.Buffer, open, close string, n int, item func(i int)) {
	b.WriteString(open)
	for i := range n {
		if i > 0 {
			b.WriteString(" , ")
		}
		item(i)
	}
	b.WriteString(close)
}

func writeEscapedString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '/':
			b.WriteString(`\/`)
		case r < 0x20 || r >= 0x7f:
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(b, `\u%04x`, u)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// reserializeCSV writes a CSV again with the same fields: quoted only
// where needed, and the other line ending.
func reserializeCSV(t testing.TB, doc []byte) []byte {
	t.Helper()
	crlf := bytes.Contains(doc, []byte("\r\n"))
	rows, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(doc, []byte("\xef\xbb\xbf")))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.UseCRLF = !crlf
	if err := w.WriteAll(rows); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(b.Bytes(), doc) {
		t.Fatal("the re-serialized CSV has the same bytes")
	}
	return b.Bytes()
}

// reserializeAll serves every dump and the CSV re-serialized.
func reserializeAll(t *testing.T, h *harness) {
	t.Helper()
	for _, p := range []string{"/hc/recalls-en.json", "/hc/recalls-fr.json"} {
		h.up.Set(p, reserializeJSON(t, h.up.Doc(p)))
	}
	h.up.Set("/tc/vrdb.csv", reserializeCSV(t, h.up.Doc("/tc/vrdb.csv")))
}

// refreshChangesNothing refreshes and fails unless the refresh fetched
// the dumps and the CSV anew yet normalized nothing, fetched no detail
// document and changed no record nor raised an event.
func refreshChangesNothing(t *testing.T, h *harness) {
	t.Helper()
	before := h.records()
	events := len(mustEvents(t, h))
	h.norm.counts()
	h.up.ResetHits()
	h.mustRefresh()
	if n := h.up.Hits("/hc/") + h.up.Hits("/tc/"); n != 3 {
		t.Fatalf("%d requests for the dumps and the CSV, want 3", n)
	}
	if n := h.up.Hits("/detail/"); n != 0 {
		t.Errorf("%d detail documents fetched, want none: no notice's content changed", n)
	}
	if runs, emitted := h.norm.counts(); len(runs) != 0 {
		t.Errorf("plugins ran %v (emitting %v), want none", runs, emitted)
	}
	if after := h.records(); !reflect.DeepEqual(after, before) {
		t.Errorf("%d records changed", changedRecords(before, after))
	}
	if n := len(mustEvents(t, h)); n != events {
		t.Errorf("%d record events raised, want none", n-events)
	}
}

func changedRecords(before, after map[string]string) int {
	n := 0
	for id, js := range after {
		if before[id] != js {
			n++
		}
	}
	for id := range before {
		if _, ok := after[id]; !ok {
			n++
		}
	}
	return n
}

// TestRefresher_Refresh_Reserialized serves the same dumps and CSV written
// by another writer: the refresh compares content, not bytes, so it
// normalizes nothing, fetches no detail document and changes no record.
// A real change after that is still seen, and only it.
func TestRefresher_Refresh_Reserialized(t *testing.T) {
	h := newHarness(t)
	h.loadBundle(nil, true)
	h.open()
	h.mustRefresh()

	reserializeAll(t, h)
	refreshChangesNothing(t, h)

	t.Run("ThenAChange", func(t *testing.T) {
		h.up.ResetHits()
		h.norm.counts()
		replace(t, h, "/hc/recalls-en.json", `"Archived" : "0" }`, `"Archived" : "1" }`)
		h.mustRefresh()
		if got := h.up.Requests("/detail/"); len(got) != 2 || !strings.HasSuffix(got[0], "/70001.json") {
			t.Errorf("detail documents fetched: %v, want 70001's two", got)
		}
		if r := h.record("hc-70001"); r == nil || r.Status != rappel.StatusArchived {
			t.Errorf("hc-70001 = %+v, want archived", r)
		}
		if _, emitted := h.norm.counts(); emitted["hcdump"] != 1 {
			t.Errorf("records normalized again: %v, want hcdump 1", emitted)
		}
	})
}

// probe is a listener that notes, each time it is told, what a client
// could read then and how many detail documents had been fetched.
type probe struct {
	h       *harness
	catalog *index.Catalog
	ids     []string // the records whose status is looked at

	mu    sync.Mutex
	calls []probeCall
}

type probeCall struct {
	records  bool
	details  int               // detail documents fetched so far
	archived map[string]bool   // ids archived in the read index
	present  map[string]string // ids in the read index, by status
}

func (p *probe) DataChanged(_ context.Context, records bool) error {
	c := probeCall{records: records, details: p.h.up.Hits("/detail/"), archived: map[string]bool{}, present: map[string]string{}}
	snap := p.catalog.Current()
	for _, id := range p.ids {
		if r, ok := snap.Record(id); ok {
			c.present[id] = string(r.Status)
			c.archived[id] = r.Status == rappel.StatusArchived
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, c)
	return nil
}

func (p *probe) take() []probeCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.calls
	p.calls = nil
	return c
}

// archiveAll archives every Health Canada notice of the English dump that
// is not yet (whose detail documents are then fetched again) and returns
// their record_ids.
func archiveAll(t *testing.T, h *harness) []string {
	t.Helper()
	ids := flipArchived(t, h, nil, "0", "1")
	if len(ids) < 3 {
		t.Fatalf("only %d active notices in the samples", len(ids))
	}
	return ids
}

// flipArchived sets Archived from from to to on the rows of the English
// dump that have it, of the record_ids in only (every Health Canada notice
// when nil), and returns the record_ids of the rows it changed.
func flipArchived(t *testing.T, h *harness, only []string, from, to string) []string {
	t.Helper()
	doc, ids := flipRows(t, h.up.Doc("/hc/recalls-en.json"), only, -1, `"Archived": "`+from+`"}`, `"Archived": "`+to+`"}`)
	h.up.Set("/hc/recalls-en.json", doc)
	return ids
}

// flipRows replaces old by new in the rows of a dump, one a line, that
// hold it and are Health Canada notices (not Transport Canada's): those of
// the record_ids in only, or when only is nil the first limit of them
// (every one when limit < 0). It returns the document and the record_ids
// of the rows changed.
func flipRows(tb testing.TB, doc []byte, only []string, limit int, old, new string) ([]byte, []string) {
	tb.Helper()
	lines := bytes.Split(doc, []byte("\n"))
	var ids []string
	for i, line := range lines {
		if len(ids) == limit {
			break
		}
		var row struct{ NID, Organization string }
		if !bytes.Contains(line, []byte(old)) || json.Unmarshal(bytes.TrimSuffix(bytes.TrimSpace(line), []byte(",")), &row) != nil || row.Organization == "TC" {
			continue
		}
		if id := "hc-" + row.NID; only == nil || slices.Contains(only, id) {
			lines[i] = bytes.Replace(line, []byte(old), []byte(new), 1)
			ids = append(ids, id)
		}
	}
	return bytes.Join(lines, []byte("\n")), ids
}

// TestRefresher_Refresh_DumpBeforeDetails changes many notices and adds
// one upstream: the dump's changes are in the read index (the listeners
// told) before any detail document is fetched, and the detail documents
// follow, the new notice's first, as a later change of the same refresh.
func TestRefresher_Refresh_DumpBeforeDetails(t *testing.T) {
	h := newHarness(t)
	h.loadBundle(nil, true)
	idx := MustIndex(t, h.store)
	p := &probe{h: h, catalog: idx.Catalog}
	h.r.Listeners = []rappel.ChangeListener{idx, p}
	h.r.DetailConcurrency = 1 // one at a time, so that the order is seen
	h.open()
	h.mustRefresh()
	p.take()

	archived := archiveAll(t, h)
	addRow(h, newRowEN, newRowFR)
	h.up.Set("/detail/en/70009.json", []byte(newDetailEN))
	p.ids = append(slices.Clone(archived), "hc-70009")
	h.up.ResetHits()
	h.mustRefresh()

	calls := p.take()
	if len(calls) != 2 {
		t.Fatalf("the listeners were told %d times, want twice (the dump's changes, then the detail documents')", len(calls))
	}
	first, second := calls[0], calls[1]
	if first.details != 0 {
		t.Errorf("%d detail documents were fetched before the dump's changes were published, want none", first.details)
	}
	for _, id := range archived {
		if !first.archived[id] {
			t.Errorf("%s is not archived in the read index when the dump's changes are published (%q)", id, first.present[id])
		}
	}
	if !first.records || !second.records {
		t.Errorf("told records changed: %v then %v, want true twice", first.records, second.records)
	}
	// The new notice's dates are in its detail document: it becomes a
	// record with the second change.
	if _, ok := second.present["hc-70009"]; !ok {
		t.Error("hc-70009 is not in the read index once its detail document is fetched")
	}
	got := h.up.Requests("/detail/")
	if want := 2 * (len(archived) + 1); len(got) != want || second.details != want {
		t.Errorf("detail documents fetched: %d (%d when told), want %d (en and fr of every changed or new notice)", len(got), second.details, want)
	}
	if len(got) > 0 && !strings.HasSuffix(got[0], "/70009.json") {
		t.Errorf("first detail document fetched: %s, want the new notice's (70009)", got[0])
	}
}

// TestRefresher_Refresh_DetailsPending publishes the dump's changes with
// no time for detail documents, as a crash right after the dump's write
// (or a spent budget) leaves it: nothing records which notices wait, and a
// refresher opened afresh on the same store finds them all the same, from
// the stored rows against the stored detail records, and fetches them
// although nothing changed upstream since.
func TestRefresher_Refresh_DetailsPending(t *testing.T) {
	h := newHarness(t)
	h.loadBundle(nil, true)
	h.open()
	h.mustRefresh()

	archived := archiveAll(t, h)
	addRow(h, newRowEN, newRowFR)
	h.up.Set("/detail/en/70009.json", []byte(newDetailEN))
	h.r.DetailBudget = 0
	h.up.ResetHits()
	h.mustRefresh()
	if n := h.up.Hits("/detail/"); n != 0 {
		t.Fatalf("%d detail documents fetched without a budget", n)
	}
	for _, id := range archived {
		if r := h.record(id); r == nil || r.Status != rappel.StatusArchived {
			t.Fatalf("%s = %+v, want archived from the dump alone", id, r)
		}
	}
	if r := h.record("hc-70009"); r != nil {
		t.Fatalf("hc-70009 = %+v before its detail document, want none (its dates are in it)", r)
	}

	// Restart: a new refresher on the same store, with the default budget.
	r := feeds.NewRefresher(h.store, h.norm, h.r.Sources...)
	r.Fetcher, r.DetailRate, r.Interval, r.ActivePlugin, r.Now, r.Logger = h.r.Fetcher, 0, h.r.Interval, h.r.ActivePlugin, h.r.Now, h.r.Logger
	h.r = r
	h.open()
	h.up.ResetHits()
	h.mustRefresh()
	if got, want := len(h.up.Requests("/detail/")), 2*(len(archived)+1); got != want {
		t.Errorf("%d detail documents fetched after the restart, want %d", got, want)
	}
	if rec := h.record("hc-70009"); rec == nil || rec.EventDate == "" {
		t.Errorf("hc-70009 = %+v after its detail document, want it with its dates", rec)
	}
	h.up.ResetHits()
	h.mustRefresh()
	if n := h.up.Hits("/detail/"); n != 0 {
		t.Errorf("%d detail documents fetched once caught up, want none", n)
	}

	t.Run("TriggerEndsTheFetch", func(t *testing.T) {
		// A slow fetch of detail documents ends early when a refresh is
		// asked for: the first refresh returns with notices left, and
		// the asked-for one goes on with them.
		h.r.DetailRate = 4
		h.r.DetailConcurrency = 1
		if restored := flipArchived(t, h, archived, "1", "0"); len(restored) != len(archived) {
			t.Fatalf("restored %v, want %v", restored, archived)
		}
		h.up.ResetHits()
		done := make(chan error, 1)
		go func() { done <- h.refresh() }()
		waitFor(t, "a detail document fetched", func() bool { return h.up.Hits("/detail/") > 0 })
		triggered := make(chan error, 1)
		go func() { triggered <- h.r.Trigger(h.ctx) }()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		// Not a timing assertion: 2 documents each for the notices, at 4
		// a second, cannot all be fetched by the time the first document
		// is seen and the trigger ends the fetch.
		first := h.up.Hits("/detail/")
		if want := 2 * len(archived); first >= want {
			t.Errorf("the first refresh fetched %d detail documents, all %d: the trigger did not end it", first, want)
		}
		if err := <-triggered; err != nil {
			t.Fatal(err)
		}
		for _, id := range archived {
			if r := h.record(id); r == nil || r.Status != rappel.StatusActive {
				t.Errorf("%s = %+v, want active again", id, r)
			}
		}
	})
}

// TestRefresher_Refresh_UpgradeHashes opens stores written before raw
// records were hashed by content (their hashes are over the bytes): the
// first refresh after the upgrade fetches and normalizes no more than
// before, and stores content hashes.
func TestRefresher_Refresh_UpgradeHashes(t *testing.T) {
	t.Run("BundleSameBytes", func(t *testing.T) {
		// A bundle made before: the first live refresh over the corpus it
		// was made from normalizes and fetches nothing.
		h := byteHashedHarness(t, false)
		h.up.ResetHits()
		h.mustRefresh()
		if n := h.up.Hits("/detail/"); n != 0 {
			t.Errorf("%d detail documents fetched, want none", n)
		}
		if runs, emitted := h.norm.counts(); emitted["hcdump"]+emitted["vrdb"]+emitted["detail"] != 0 {
			t.Errorf("plugins ran %v, emitting %v; want nothing normalized", runs, emitted)
		}
		mustContentHashes(t, h)
		reserializeAll(t, h)
		refreshChangesNothing(t, h)
	})
	t.Run("LiveReserialized", func(t *testing.T) {
		// A data dir the feeds wrote before, whose agency changes its
		// writer the day of the upgrade: content is compared through the
		// stored data.
		h := byteHashedHarness(t, true)
		reserializeAll(t, h)
		refreshChangesNothing(t, h)
		mustContentHashes(t, h)
		h.up.ResetHits()
		replace(t, h, "/hc/recalls-en.json", `"Archived" : "0" }`, `"Archived" : "1" }`)
		h.mustRefresh()
		if got := h.up.Requests("/detail/"); len(got) != 2 {
			t.Errorf("detail documents fetched after one notice changed: %v, want its two", got)
		}
	})
}

// byteHashedHarness opens a harness whose store holds the samples with raw
// records hashed by their bytes, as stores written before content hashes
// do: a bundle's (without data, not live) or, with live set, those of a
// data dir the feeds wrote.
func byteHashedHarness(t *testing.T, live bool) *harness {
	t.Helper()
	h := newHarness(t)
	raw, err := feeds.ByteHashedRaw(sampleCorpus(t), live)
	if err != nil {
		t.Fatal(err)
	}
	h.loadStore(nil, raw, live)
	h.open()
	return h
}

// mustContentHashes fails unless every raw record of the row sources is
// hashed by content and every detail record versioned by content.
func mustContentHashes(t *testing.T, h *harness) {
	t.Helper()
	for _, source := range []string{"hcdump", "vrdb", "detail"} {
		if err := h.store.RawIndex(h.ctx, source, func(raw rappel.RawRecord) error {
			if source != "detail" && !feeds.ContentHashed(raw.Hash) || source == "detail" && !feeds.ContentHashed(raw.Version) {
				return fmt.Errorf("raw record %s of %s: hash %q, version %q", raw.Key, source, raw.Hash, raw.Version)
			}
			return nil
		}); err != nil {
			t.Error(err)
		}
	}
}
