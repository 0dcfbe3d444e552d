package edge

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/index"
)

// lookupTargets are VIN and barcode lookups of lookupRecords covering each
// kind of answer: matches by make, model and year and by make and year,
// none, a VIN with no check digit, barcodes in several printed forms, with
// and without lang, and one whose printed form needs escaping.
func lookupTargets() []string {
	vin := func(v string, more ...string) string {
		q := url.Values{"vin": {v}}
		if len(more) == 2 {
			q.Set(more[0], more[1])
		}
		return "/recall/vin?" + q.Encode()
	}
	upc := func(v string, more ...string) string {
		q := url.Values{"upc": {v}}
		if len(more) == 2 {
			q.Set(more[0], more[1])
		}
		return "/recall/upc?" + q.Encode()
	}
	return []string{
		vin(camryVIN), vin(camryVIN, "lang", "fr"), vin("4t1-bb3ek5-au118081"), vin(sonataVIN),
		vin(pickupVIN, "lang", "en"), vin(nissanVIN), vin(ladaVIN),
		upc(cheddarUPC), upc("0 " + cheddarUPC[1:6] + " " + cheddarUPC[6:]), upc(datesUPCE, "lang", "fr"),
		upc(datesUPCA), upc(toyEAN8), upc(" " + cheddarUPC + "*"), upc(withCheck("07700000001")),
	}
}

// TestLookups_AnswersKept checks that the answers kept for VIN and barcode
// lookups (answers.go) are byte for byte those of a node that keeps none,
// whose Lookup cannot tell its change log position, on the first request
// and on the next.
func TestLookups_AnswersKept(t *testing.T) {
	e := mustLookupEnv(t, lookupRecords())
	plain, _ := MustServer(t, e.catalog)
	plain.Lookup = struct{ rappel.Lookup }{e.store} // hides ChangeSeq
	plain.Now = e.srv.Now
	plain.Logger = discardLogger()
	ph := plain.Handler()
	for _, target := range lookupTargets() {
		want := servePlain(t, ph, target)
		for i := range 2 {
			w := e.serve(target)
			if w.Code != 200 || !bytes.Equal(w.Body.Bytes(), want) {
				t.Errorf("%s, request %d: %d %s\nwant %s", target, i+1, w.Code, w.Body, want)
			}
		}
	}
	if e.srv.answers.cur.Load() == nil {
		t.Error("no answers were kept")
	}
}

// servePlain is GET target on h with the test key, which must answer 200.
func servePlain(tb testing.TB, h http.Handler, target string) []byte {
	tb.Helper()
	r := httptest.NewRequest(http.MethodGet, target, nil)
	r.Header.Set("X-Gateway-Key", testKey)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		tb.Fatalf("%s on the node keeping no answers: %d %s", target, w.Code, w.Body)
	}
	return w.Body.Bytes()
}

// TestLookups_AnswersFollowTheData checks that a kept answer is not
// served once the data it came from changed: a record written to the
// store (the lookup's keys) and a new snapshot (the summaries) each show
// in the next lookup.
func TestLookups_AnswersFollowTheData(t *testing.T) {
	recs := lookupRecords()
	e := mustLookupEnv(t, recs)
	camry := func() []string { return e.vin(t, camryVIN).ids() }
	if got := camry(); !slices.Equal(got, []string{"tc-2026901", "tc-2025902"}) {
		t.Fatalf("camry: %v", got)
	}
	camry() // kept

	t.Run("StoreWrite", func(t *testing.T) {
		// The brake booster notice no longer names the Camry: its key
		// goes from the store, the snapshot is unchanged.
		i := slices.IndexFunc(recs, func(r *rappel.Record) bool { return r.RecordID == "tc-2025902" })
		upd := *recs[i]
		upd.AffectedModels = upd.AffectedModels[:1]
		if err := e.store.PutRecords(t.Context(), []*rappel.Record{&upd}); err != nil {
			t.Fatal(err)
		}
		if got := camry(); !slices.Equal(got, []string{"tc-2026901"}) {
			t.Errorf("after the store write, camry found %v, want tc-2026901 alone", got)
		}
	})
	t.Run("NewSnapshot", func(t *testing.T) {
		// The air bag notice's title is corrected in a new snapshot.
		const title = "Toyota Camry (2010-2011): passenger air bag may not deploy (corrected)"
		next := slices.Clone(recs)
		i := slices.IndexFunc(next, func(r *rappel.Record) bool { return r.RecordID == "tc-2026901" })
		upd := *next[i]
		en := *upd.Translations.EN
		en.Title = title
		upd.Translations.EN = &en
		next[i] = &upd
		snap, err := index.Build(next, rappel.DatasetInfo{UpdatedAt: lookupNow, Source: "bundle"})
		if err != nil {
			t.Fatal(err)
		}
		e.catalog.Swap(snap)
		b := e.vin(t, camryVIN)
		if len(b.Results) == 0 || b.Results[0].TitleEN != title {
			t.Errorf("after the new snapshot, camry found %+v, want the corrected title first", b.Results)
		}
	})
}

// TestAnswerSet_Bounded checks that a set of answers past its bounds
// starts again empty rather than growing: a client sending barcode after
// barcode cannot make the node keep them all.
func TestAnswerSet_Bounded(t *testing.T) {
	s := &answerSet{m: map[string][]byte{}}
	for i := range maxAnswers + 10 {
		s.put(answerKey(nil, "upc", strconv.Itoa(i)), []byte(`"count":0,"results":[]}`))
	}
	if len(s.m) > maxAnswers || len(s.m) != 10 {
		t.Errorf("after %d answers the set holds %d, want the last 10", maxAnswers+10, len(s.m))
	}
	if _, ok := s.get(answerKey(nil, "upc", strconv.Itoa(maxAnswers+9))); !ok {
		t.Error("the last answer put is not kept")
	}
	big := make([]byte, maxAnswerBytes/2)
	s.put([]byte("a"), big)
	s.put([]byte("b"), big) // over the bytes bound: starts again
	if _, ok := s.get([]byte("a")); ok || s.size > maxAnswerBytes {
		t.Errorf("after two answers of half the bound, the set holds %d bytes and the first answer", s.size)
	}
}
