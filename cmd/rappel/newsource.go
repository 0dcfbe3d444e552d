package main

import (
	"context"
	"errors"
	"slices"

	"github.com/rappel-ca/rappel/edge"
	"github.com/rappel-ca/rappel/feeds"
	"github.com/rappel-ca/rappel/plugins"
)

// manifestSource is the feed a plugin's manifest describes: its documents
// fetched whole, as often as it asks (every refresh when it does not say),
// under the manifest rules (feeds.Fetcher.GetManifest) and within budget
// bytes a refresh (--plugin-documents-budget).
func manifestSource(m *plugins.Manifest, budget int64) *feeds.Source {
	docs := make([]feeds.Doc, len(m.Documents))
	for i, d := range m.Documents {
		docs[i] = feeds.Doc{Name: d.Name, URL: d.URL, Format: d.Format, MaxBytes: d.MaxBytes, FromManifest: true,
			Unconditional: m.ConditionalGet != nil && !*m.ConditionalGet}
	}
	src := feeds.Whole(m.Source, docs, m.IntervalOr(0), m.Merge == plugins.MergeEnrich)
	src.Budget = budget
	return src
}

// removeSource removes a source a plugin's manifest added: the feeds stop
// refreshing it and archive its records, then its plugin is dropped, in
// that order so that no refresh runs between without a plugin. The
// source's refused plugins go too; for a source no manifest added, they
// are all that goes, and only a source without any is refused.
func removeSource(ctx context.Context, live *feeds.Live, reg *plugins.Registry, source, reason string) error {
	if reg.Manifest(source) == nil {
		if n, err := reg.DropRefused(source); n > 0 || err != nil {
			return err
		}
		if reg.Active(source) != "" || slices.Contains(live.SourceNames(), source) {
			return edge.ErrBundledSource
		}
		return edge.ErrUnknownSource
	}
	if err := live.RemoveSource(ctx, source, reason); err != nil && !errors.Is(err, feeds.ErrNoSource) {
		return err
	}
	if err := reg.Remove(source, reason); err != nil {
		return err
	}
	_, err := reg.DropRefused(source)
	return err
}
