package kv

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/rappel-ca/rappel"
)

// TestStore_ApplyPublishing: a fleet leader's write is committed only once
// published. A publish that fails leaves every key as it was; one that
// succeeds commits at the version given, and a follower applying what was
// published (ApplyPublished) ends with the same keys and values, change
// log included.
func TestStore_ApplyPublishing(t *testing.T) {
	ctx := context.Background()
	leader, follower := mustOpenAt(t, vfs.NewMem(), "leader"), mustOpenAt(t, vfs.NewMem(), "follower")
	st := rappel.SourceState{Feed: rappel.FeedState{Source: "hcdump", Live: true, Records: 2}}
	r1, r2 := rec(1, "hc-1", "Peas recalled"), rec(2, "hc-2", "Corn recalled")
	info := rappel.DatasetInfo{Source: "agencies", Records: 2}
	c := &rappel.SourceChange{State: st, PutPartials: []*rappel.Record{r1, r2}, PutRecords: []*rappel.Record{r1, r2},
		PutRaw: []rappel.RawRecord{{Key: "1", Hash: "h1", IDs: []string{"hc-1"}, Data: []byte(`{"NID":"1"}`)}}, Info: &info}

	before := mustPairs(t, leader)
	down := errors.New("the shared store is down")
	if err := leader.ApplyPublishing(ctx, c, func(context.Context, rappel.StagedChange) (*rappel.DatasetInfo, error) { return nil, down }); !errors.Is(err, down) {
		t.Fatalf("ApplyPublishing with a failing publish = %v", err)
	}
	if after := mustPairs(t, leader); !slices.Equal(before, after) {
		t.Fatalf("a write whose publish failed changed the store:\nbefore %q\nafter  %q", before, after)
	}

	var staged rappel.StagedChange
	if err := leader.ApplyPublishing(ctx, c, func(_ context.Context, s rappel.StagedChange) (*rappel.DatasetInfo, error) {
		staged = s
		out := info
		out.Version = 7
		return &out, nil
	}); err != nil {
		t.Fatal(err)
	}
	if got, _ := leader.DatasetInfo(ctx); got.Version != 7 {
		t.Fatalf("the dataset version after publishing = %d, want 7", got.Version)
	}
	if len(staged.Changes) != 2 || staged.Changes[0].Seq != 1 || staged.Changes[0].Kind != rappel.ChangeCreated || len(staged.Put) != 2 || len(staged.Delete) != 0 {
		t.Fatalf("staged %+v", staged)
	}

	// The follower applies the publication: the source's state, partial
	// and raw records, the records and the leader's entries.
	pinfo := info
	pinfo.Version = 7
	if err := follower.ApplyPublished(ctx, &rappel.SourceChange{State: st, PutPartials: c.PutPartials, PutRaw: rappel.Unpublished(rappel.PublishRaw(c.PutRaw)),
		PutRecords: staged.Put, DeleteRecords: staged.Delete, Info: &pinfo}, staged.Gen, staged.Changes); err != nil {
		t.Fatal(err)
	}
	if l, f := mustPairs(t, leader), mustPairs(t, follower); !slices.Equal(l, f) {
		t.Fatalf("the follower's store differs from the leader's:\nleader   %q\nfollower %q", l, f)
	}

	// A write that changes nothing of the records stages no entry, and
	// the next numbers follow the last published.
	r1b := rec(1, "hc-1", "Frozen peas recalled")
	if err := leader.ApplyPublishing(ctx, &rappel.SourceChange{State: st, PutRecords: []*rappel.Record{r1b, r2}}, func(_ context.Context, s rappel.StagedChange) (*rappel.DatasetInfo, error) {
		staged = s
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(staged.Changes) != 1 || staged.Changes[0].Seq != 3 || staged.Changes[0].RecordID != "hc-1" || len(staged.Put) != 1 || staged.Put[0] != r1b {
		t.Fatalf("staged after one title changed: %+v", staged)
	}
}
