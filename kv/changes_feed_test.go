package kv

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
)

// feedLog reads every entry after after as "seq:kind:id[:status]", the
// status of the record the entry carries, with the page's floor and last.
func feedLog(tb testing.TB, s *Store, gen, after uint64, limit int) (string, *rappel.ChangePage) {
	tb.Helper()
	p, err := s.ReadChanges(context.Background(), gen, after, limit)
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, e := range p.Entries {
		item := fmt.Sprintf("%d:%s:%s", e.Seq, e.Kind, e.RecordID)
		if e.Record != nil {
			item += ":" + e.Record.Status
		}
		out = append(out, item)
	}
	return strings.Join(out, " "), p
}

// TestStore_ReadChanges checks that the log tells a new record from a new
// version and from an archiving, that entries carry the commit time and
// the record as stored, that limit pages them, and that a full load
// leaves nothing to read in the old generation.
func TestStore_ReadChanges(t *testing.T) {
	ctx := context.Background()
	s := MustOpenStore(t)
	clock := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return clock }
	gen, _ := mustChangeSeq(t, s)
	recs := makeRecords(2)
	recs[1].Status = rappel.StatusActive
	if err := s.PutRecords(ctx, recs); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Minute)
	a := *recs[0]
	a.RecallDate = "2026-11-20"
	b := *recs[1]
	b.Status = rappel.StatusArchived
	if err := s.PutRecords(ctx, []*rappel.Record{&a, &b}); err != nil {
		t.Fatal(err)
	}
	// Archived again with another change: updated, not archived twice.
	b.RecallDate = "2026-11-21"
	if err := s.PutRecords(ctx, []*rappel.Record{&b}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRecords(ctx, []string{a.RecordID}); err != nil {
		t.Fatal(err)
	}
	ida, idb := a.RecordID, b.RecordID
	got, p := feedLog(t, s, gen, 0, 100)
	want := fmt.Sprintf("1:created:%s 2:created:%s:archived 3:updated:%s 4:archived:%s:archived 5:updated:%s:archived 6:deleted:%s",
		ida, idb, ida, idb, idb, ida)
	if got != want {
		t.Fatalf("entries\n got %s\nwant %s", got, want)
	}
	if p.Entries[0].At != clock.Add(-time.Minute) || p.Entries[2].At != clock || p.Last != 6 || p.Floor != 0 || p.Gen != gen {
		t.Fatalf("times %v %v, position %d/%d/%d", p.Entries[0].At, p.Entries[2].At, p.Gen, p.Floor, p.Last)
	}
	if got, _ := feedLog(t, s, gen, 2, 2); got != fmt.Sprintf("3:updated:%s 4:archived:%s:archived", ida, idb) {
		t.Fatalf("page after 2: %s", got)
	}
	if got, p := feedLog(t, s, gen, 6, 2); got != "" || p.Last != 6 {
		t.Fatalf("page after the last: %q, last %d", got, p.Last)
	}
	if err := s.Replace(ctx, makeRecords(1), nil, nil, nil, rappel.DatasetInfo{Source: "bundle"}); err != nil {
		t.Fatal(err)
	}
	got, p = feedLog(t, s, gen, 0, 100)
	if got != "" || p.Gen == gen || p.Floor != 6 || p.Last != 6 {
		t.Fatalf("after a full load: %q, position %d/%d/%d", got, p.Gen, p.Floor, p.Last)
	}
}

// TestStore_KeepChanges checks that TrimChanges keeps the entries younger
// than KeepChanges and trims the older ones as asked.
func TestStore_KeepChanges(t *testing.T) {
	ctx := context.Background()
	s := MustOpenStore(t)
	clock := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return clock }
	s.KeepChanges = 7 * 24 * time.Hour
	gen, _ := mustChangeSeq(t, s)
	for i, r := range makeRecords(4) {
		clock = clock.Add(48 * time.Hour) // entries on days 3, 5, 7 and 9
		if err := s.PutRecords(ctx, []*rappel.Record{r}); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	// Day 13: the entries of days 3 and 5 are older than a week.
	clock = clock.Add(4 * 24 * time.Hour)
	if err := s.TrimChanges(ctx, 4); err != nil {
		t.Fatal(err)
	}
	if got, p := feedLog(t, s, gen, 0, 100); p.Floor != 2 || strings.Count(got, "created") != 2 {
		t.Fatalf("after trimming on day 13: floor %d, entries %s", p.Floor, got)
	}
	// Asked to trim less than is old: as asked.
	clock = clock.Add(30 * 24 * time.Hour)
	if err := s.TrimChanges(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if _, p := feedLog(t, s, gen, 0, 100); p.Floor != 3 {
		t.Fatalf("floor %d after trimming to 3, want 3", p.Floor)
	}
}

// TestDecodeChange_Kinds checks that the entries of stores written before
// the log told kinds apart still read, as updated and deleted without a
// time, that every kind written now round-trips, and that an unknown kind
// byte is an error, never a guess.
func TestDecodeChange_Kinds(t *testing.T) {
	at := time.Date(2026, 11, 26, 13, 0, 0, 123e6, time.UTC)
	for _, c := range []struct {
		val  []byte
		kind string
		at   time.Time
	}{
		{[]byte("\x01hc-1"), rappel.ChangeUpdated, time.Time{}},
		{[]byte("\x02hc-1"), rappel.ChangeDeleted, time.Time{}},
		{changeValue(nil, "hc-1", changeCreated, at), rappel.ChangeCreated, at},
		{changeValue(nil, "hc-1", changeUpdated, at), rappel.ChangeUpdated, at},
		{changeValue(nil, "hc-1", changeArchived, at), rappel.ChangeArchived, at},
		{changeValue(nil, "hc-1", changeDeleted, at), rappel.ChangeDeleted, at},
	} {
		got, err := decodeChange(c.val)
		if err != nil || got.id != "hc-1" || changeKinds[got.kind] != c.kind || !got.at.Equal(c.at) {
			t.Errorf("%q: %+v, %v; want %s at %v", c.val, got, err, c.kind, c.at)
		}
	}
	for _, bad := range [][]byte{nil, {0x01}, []byte("\x07hc-1xxxxxxxxx"), []byte("\x03short")} {
		if _, err := decodeChange(bad); err == nil {
			t.Errorf("%q read as an entry", bad)
		}
	}
}
