package edge

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv"
)

// changesEnv is a server whose change feed reads a real Pebble store.
type changesEnv struct {
	st   *kv.Store
	d    *openAPI
	base string
}

func newChangesEnv(t *testing.T, recs []*rappel.Record) *changesEnv {
	t.Helper()
	st := mustStore(t, recs)
	s, _ := MustServer(t, MustCatalog(t, recs))
	s.Changes = st
	s.PublicURL = testPublicURL
	// A limited plan, so that responses carry the RateLimit headers the
	// document promises.
	s.Keys = planKeys{testKey: "roomy"}
	s.Plans = map[string]rappel.Plan{"roomy": {Name: "roomy", Rate: 1000, Burst: 1000, Monthly: 1_000_000}}
	return &changesEnv{st: st, d: mustOpenAPI(t), base: MustHTTP(t, s.Handler()).URL}
}

// changesPage is GET /recall/changes's body.
type changesPage struct {
	Count   int    `json:"count"`
	Next    string `json:"next"`
	HasMore bool   `json:"has_more"`
	Changes []struct {
		Type     string         `json:"type"`
		Seq      uint64         `json:"seq"`
		At       *time.Time     `json:"at"`
		RecordID string         `json:"record_id"`
		Record   *rappel.Record `json:"record"`
	} `json:"changes"`
}

// get sends GET target with the test key, checks the response against the
// document and its status against want, and returns the body.
func (e *changesEnv) get(t *testing.T, target string, want int) []byte {
	t.Helper()
	_, body := e.request(t, target, map[string]string{"X-Gateway-Key": testKey}, want)
	return body
}

// request sends GET target with header, checks its status against want
// and, but for a 304, the response against the document.
func (e *changesEnv) request(t *testing.T, target string, header map[string]string, want int) (*http.Response, []byte) {
	t.Helper()
	c := docCase{"GET", target, "", header, want}
	resp, body := docRequest(t, e.base, c)
	if resp.StatusCode != want {
		t.Fatalf("GET %s: status %d, want %d: %s", target, resp.StatusCode, want, body)
	}
	if want != http.StatusNotModified { // no body, no content to check
		e.d.checkResponse(t, c, resp, body)
	}
	return resp, body
}

func (e *changesEnv) page(t *testing.T, target string) changesPage {
	t.Helper()
	var p changesPage
	if err := json.Unmarshal(e.get(t, target, http.StatusOK), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// follow reads every entry after since, limit at a time, and returns them
// as "type:record_id[:status]" and the cursor to continue from.
func (e *changesEnv) follow(t *testing.T, since string, limit int) ([]string, string) {
	t.Helper()
	var out []string
	var last uint64
	for range 100 {
		target := fmt.Sprintf("/recall/changes?limit=%d", limit)
		if since != "" {
			target += "&since=" + since
		}
		p := e.page(t, target)
		if p.Count != len(p.Changes) || p.Count > limit {
			t.Fatalf("%s: count %d, %d entries, limit %d", target, p.Count, len(p.Changes), limit)
		}
		for _, c := range p.Changes {
			if c.Seq <= last {
				t.Fatalf("%s: entry %d after %d: not in commit order, or seen twice", target, c.Seq, last)
			}
			last = c.Seq
			item := c.Type + ":" + c.RecordID
			if c.Record != nil {
				item += ":" + c.Record.Status
			}
			if c.At == nil {
				t.Errorf("%s: entry %d has no time", target, c.Seq)
			}
			out = append(out, item)
		}
		since = p.Next
		if !p.HasMore {
			return out, since
		}
	}
	t.Fatal("the feed never ended")
	return nil, ""
}

// TestChanges_Feed walks the change feed through the real router over a
// real store while records are created, updated, archived and deleted:
// entries come in commit order with their kinds, and resuming from each
// response's cursor, a page at a time, returns every change once.
func TestChanges_Feed(t *testing.T) {
	recs := testRecords()
	e := newChangesEnv(t, recs)
	ctx := t.Context()

	// The store was filled by one write: three records created.
	got, cur := e.follow(t, "", 2)
	want := "recall.created:hc-73841:active recall.created:tc-2025123:active recall.created:hc-74012:archived"
	if s := strings.Join(got, " "); s != want {
		t.Fatalf("from the start:\n got %s\nwant %s", s, want)
	}
	now := e.page(t, "/recall/changes?since=now")
	if now.Count != 0 || now.HasMore || now.Next != cur {
		t.Fatalf("since=now: %+v, want no entries and the cursor %s", now, cur)
	}

	// A refresh: a new record, a new version, an archiving, a deletion.
	cheddar, civic := *recs[0], *recs[1]
	cheddar.RecallDate = "2025-03-01"
	civic.Status = rappel.StatusArchived
	added := *recs[2]
	added.RecordID, added.RecallID, added.Status = "hc-74013", "74013", rappel.StatusActive
	if err := e.st.PutRecords(ctx, []*rappel.Record{&cheddar, &civic, &added}); err != nil {
		t.Fatal(err)
	}
	if err := e.st.DeleteRecords(ctx, []string{"hc-74012"}); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{1, 2, 500} {
		got, next := e.follow(t, cur, limit)
		want := "recall.updated:hc-73841:active recall.archived:tc-2025123:archived recall.created:hc-74013:active recall.deleted:hc-74012"
		if s := strings.Join(got, " "); s != want {
			t.Fatalf("limit %d:\n got %s\nwant %s", limit, s, want)
		}
		if again, _ := e.follow(t, next, limit); len(again) != 0 {
			t.Fatalf("limit %d: resuming at the end returned %v", limit, again)
		}
	}
	// The record carries the language asked for.
	p := e.page(t, "/recall/changes?limit=1&lang=fr&since="+cur)
	if tr := p.Changes[0].Record.Translations; tr.EN != nil || tr.FR == nil {
		t.Fatalf("lang=fr: translations %+v", tr)
	}
}

// TestChanges_Gone checks the 410s: a cursor of an earlier load of the
// dataset, and one older than the changes kept; and the 422s of cursors
// that are not ones.
func TestChanges_Gone(t *testing.T) {
	recs := testRecords()
	e := newChangesEnv(t, recs)
	ctx := t.Context()
	start := e.page(t, "/recall/changes?since=now").Next
	for i := range 3 {
		r := *recs[0]
		r.RecallDate = fmt.Sprintf("2025-03-0%d", i+1)
		if err := e.st.PutRecords(ctx, []*rappel.Record{&r}); err != nil {
			t.Fatal(err)
		}
	}
	mid := e.page(t, "/recall/changes?limit=1&since="+start).Next
	if err := e.st.TrimChanges(ctx, 5); err != nil { // the three creations and two updates
		t.Fatal(err)
	}
	for _, c := range []string{start, mid} {
		body := e.get(t, "/recall/changes?since="+c, http.StatusGone)
		if !strings.Contains(string(body), "oldest change") || !strings.Contains(string(body), "/recall/export") {
			t.Errorf("410 of a trimmed cursor: %s", body)
		}
	}
	kept := e.page(t, "/recall/changes")
	if kept.Count != 1 || kept.Changes[0].Seq != 6 {
		t.Fatalf("without since after trimming: %+v, want entry 6 alone", kept)
	}
	c, _ := parseChangeCursor(start)
	ahead := changeCursor{gen: c.gen, seq: 1000}.String()
	later := changeCursor{gen: c.gen + 1, seq: 1}.String() // a load that has not happened
	for _, bad := range []string{"x", "AQAAAAAAAAABAAAAAAAAAAM=", "!!!!!!!!!!!!!!!!!!!!!!!", "AgAAAAAAAAABAAAAAAAAAAM", ahead, later, strings.Repeat("A", 200)} {
		body := e.get(t, "/recall/changes?since="+bad, http.StatusUnprocessableEntity)
		if !strings.Contains(string(body), "since") {
			t.Errorf("since=%s: %s", bad, body)
		}
	}
	if err := e.st.Replace(ctx, recs, nil, nil, nil, rappel.DatasetInfo{Source: "bundle"}); err != nil {
		t.Fatal(err)
	}
	body := e.get(t, "/recall/changes?since="+kept.Next, http.StatusGone)
	if !strings.Contains(string(body), "reloaded in full") {
		t.Errorf("410 after a full load: %s", body)
	}
	if p := e.page(t, "/recall/changes"); p.Count != 0 || p.HasMore {
		t.Fatalf("the new generation starts empty: %+v", p)
	}
}

// FuzzChangeCursor checks that any since value parses without panicking,
// that what parses writes back as given, and that cursors round-trip.
func FuzzChangeCursor(f *testing.F) {
	f.Add("AQAAAAAAAAABAAAAAAAAAAM", uint64(1), uint64(3))
	f.Add("now", uint64(0), uint64(0))
	f.Add("AQAAAAAAAAABAAAAAAAAAAN", ^uint64(0), ^uint64(0))
	f.Add("", uint64(7), uint64(0))
	f.Fuzz(func(t *testing.T, s string, gen, seq uint64) {
		if c, ok := parseChangeCursor(s); ok && c.String() != s {
			t.Fatalf("%q parses as %+v, which writes %q", s, c, c.String())
		}
		c := changeCursor{gen, seq}
		if back, ok := parseChangeCursor(c.String()); !ok || back != c {
			t.Fatalf("%+v writes %q, which parses as %+v, %v", c, c.String(), back, ok)
		}
	})
}
