package feeds

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/rappel-ca/rappel"
)

// Sources added and removed while the feeds run: a plugin whose manifest
// describes a new source adds it; an operator removes it, and its records
// are archived rather than deleted, so that a client holding a record_id
// is told the recall is no longer followed instead of "not found".

// AddSource adds src, or puts it in place of the source of the same name,
// from the next refresh on, and asks for that refresh now. Only a source
// fetched whole can be added this way (Whole).
func (r *Refresher) AddSource(src *Source) error {
	if err := src.Validate(); err != nil {
		return err
	}
	if src.Template != "" || src.Follows != "" {
		return fmt.Errorf("source %s: a source added at run time is fetched whole; it cannot follow another", src.Name)
	}
	r.smu.Lock()
	r.added = append(r.added, src)
	r.smu.Unlock()
	r.Kick()
	return nil
}

// adopt makes the sources added since the last refresh part of the
// refreshes. r.mu must be held: r.Sources changes.
func (r *Refresher) adopt() {
	r.smu.Lock()
	defer r.smu.Unlock()
	for _, src := range r.added {
		srcs := slices.Clone(r.Sources)
		if i := slices.IndexFunc(srcs, func(s *Source) bool { return s.Name == src.Name }); i >= 0 {
			srcs[i] = src
		} else {
			srcs = append(srcs, src)
		}
		r.Sources = srcs
		if _, ok := r.states[src.Name]; !ok {
			r.states[src.Name] = rappel.FeedState{Source: src.Name}
		}
	}
	r.added = nil
}

// Source returns the source named name, or nil.
func (r *Refresher) Source(name string) *Source {
	r.smu.RLock()
	defer r.smu.RUnlock()
	if i := slices.IndexFunc(r.Sources, func(s *Source) bool { return s.Name == name }); i >= 0 {
		return r.Sources[i]
	}
	return nil
}

// SourceNames returns the names of the sources refreshed, in order.
func (r *Refresher) SourceNames() []string {
	r.smu.RLock()
	defer r.smu.RUnlock()
	names := make([]string, len(r.Sources))
	for i, s := range r.Sources {
		names[i] = s.Name
	}
	return names
}

// intervalOf returns the interval of the source named name; 0 when it has
// none of its own. r.smu must be held.
func (r *Refresher) intervalOf(name string) time.Duration {
	if i := slices.IndexFunc(r.Sources, func(s *Source) bool { return s.Name == name }); i >= 0 {
		return r.Sources[i].Interval
	}
	return 0
}

// due reports whether src is to be refreshed now: always, unless it has an
// Interval of its own and its last refresh succeeded less than that ago
// with the plugin that runs now.
func (r *Refresher) due(src *Source) bool {
	if src.Interval <= 0 {
		return true
	}
	r.smu.RLock()
	st := r.states[src.Name]
	r.smu.RUnlock()
	if st.LastSuccess.IsZero() || st.LastError != "" || st.LastAttempt.After(st.LastSuccess) {
		return true
	}
	if r.ActivePlugin != nil && r.ActivePlugin(src.Name) != st.Plugin {
		return true
	}
	return r.Now().Sub(st.LastSuccess) >= src.Interval
}

// ErrNoSource is returned by RemoveSource for a name no source has.
var ErrNoSource = errors.New("no source of this name is refreshed")

// RemoveSource stops refreshing the source named name and archives its
// records: each record it created gets status archived (webhooks are told
// of each, like any archiving), and the records it only enriched lose what
// it added. Its state keeps reason, which /health shows. It waits for the
// refresh under way, cutting a fetch of detail documents short.
func (r *Refresher) RemoveSource(ctx context.Context, name, reason string) error {
	r.yield()
	r.mu.Lock()
	defer r.mu.Unlock()
	ctx, release, err := r.hold(ctx)
	if err != nil {
		return err
	}
	defer release()
	r.adopt()
	src := r.Source(name)
	if src == nil {
		return fmt.Errorf("%w: %q (the sources are %v)", ErrNoSource, name, r.SourceNames())
	}
	var ids []string
	if err := r.store().PartialHashes(ctx, name, func(id, _ string) error {
		ids = append(ids, id)
		return nil
	}); err != nil {
		return err
	}
	parts, err := r.store().Partials(ctx, name, ids)
	if err != nil {
		return err
	}
	puts, dels := map[string]*rappel.Record{}, map[string]bool{}
	for id, p := range parts {
		if src.Enriches {
			dels[id] = true
			continue
		}
		if p.Status != rappel.StatusArchived {
			c := *p
			c.Status = rappel.StatusArchived
			puts[id] = &c
		} else {
			puts[id] = p
		}
	}
	now := r.Now()
	asm, err := r.assemble(ctx, src, puts, dels, now)
	if err != nil {
		return err
	}
	st, err := r.store().SourceState(ctx, name)
	if err != nil {
		return err
	}
	st.Feed.Removed = fmt.Sprintf("%s: %s", now.UTC().Format(time.RFC3339), reason)
	st.Feed.LastError, st.Feed.LastErrorReason, st.Feed.Records = "", "", len(puts)
	c := &rappel.SourceChange{State: st, PutRecords: asm.put, DeleteRecords: asm.del, DeletePartials: sortedKeys(dels),
		Events: &rappel.RecordEvents{At: now, Source: name, Created: asm.added, Updated: asm.updated, Archived: asm.archived}}
	for _, id := range sortedKeys(puts) {
		c.PutPartials = append(c.PutPartials, puts[id])
	}
	info, err := r.store().DatasetInfo(ctx)
	if err != nil {
		return err
	}
	info.Records += asm.delta
	info.UpdatedAt = now
	c.Info = &info
	if err := r.store().ApplySource(ctx, c); err != nil {
		return err
	}
	r.smu.Lock()
	r.Sources = slices.DeleteFunc(slices.Clone(r.Sources), func(s *Source) bool { return s.Name == name })
	r.states[name] = st.Feed
	r.smu.Unlock()
	r.Logger.Warn("source removed; its records are archived", "source", name, "archived", len(asm.archived), "reason", reason)
	r.dirty = true
	return r.tell(ctx)
}
