package kv

import (
	"context"
	"testing"

	"github.com/rappel-ca/rappel"
)

// TestStore_RecordEvents checks the webhooks' queue: numbered apart from
// the alerts' new recalls, acknowledged on its own, durable.
func TestStore_RecordEvents(t *testing.T) {
	ctx := context.Background()
	s := MustOpenStore(t)
	state := rappel.SourceState{Feed: rappel.FeedState{Source: "hcdump"}}
	c := &rappel.SourceChange{State: state, NewRecalls: &rappel.NewRecalls{RecordIDs: []string{"hc-1"}},
		Events: &rappel.RecordEvents{Source: "hcdump", Created: []string{"hc-1"}, Updated: []string{"hc-2"}}}
	if err := s.ApplySource(ctx, c); err != nil {
		t.Fatal(err)
	}
	c2 := &rappel.SourceChange{State: state, Events: &rappel.RecordEvents{Archived: []string{"hc-3"}}}
	if err := s.ApplySource(ctx, c2); err != nil {
		t.Fatal(err)
	}
	// Nothing to say: not written.
	if err := s.ApplySource(ctx, &rappel.SourceChange{State: state, Events: &rappel.RecordEvents{}}); err != nil {
		t.Fatal(err)
	}
	if c.Events.Seq != 1 || c2.Events.Seq != 2 {
		t.Fatalf("seqs %d, %d; want 1, 2", c.Events.Seq, c2.Events.Seq)
	}
	if err := s.AckNewRecalls(ctx, 1); err != nil {
		t.Fatal(err)
	}
	MustReopen(t, s)
	got, err := s.RecordEvents(ctx)
	if err != nil || len(got) != 2 || got[0].Updated[0] != "hc-2" || got[1].Archived[0] != "hc-3" {
		t.Fatalf("RecordEvents = %+v, %v", got, err)
	}
	if err := s.AckRecordEvents(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if got, err := s.RecordEvents(ctx); err != nil || len(got) != 1 || got[0].Seq != 2 {
		t.Fatalf("after the ack: %+v, %v", got, err)
	}
}
