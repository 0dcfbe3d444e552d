package feeds

import (
	"context"
	"fmt"

	"github.com/rappel-ca/rappel"
)

// A source with an overlay document (Doc's Overlay) is planned here: its
// base document (Transport Canada's monthly full file) fetched at most
// every Doc.Every, its overlay (the 60-day extract, published daily) at
// every refresh, merged by key. The raw records as they then stand are:
//
//   - the base's, when the base was fetched and changed (or the source's
//     stored raw records have to be replaced: the first live refresh);
//     otherwise the stored ones, which the base's last change and the
//     overlays since made: the base is neither fetched nor split again;
//   - overlaid by the overlay's: a key the overlay has takes its rows;
//   - when the overlay cannot be fetched or read, the stored raw records
//     stay where the base has none, and a problem says why.
//
// So a key leaves only when a base that changed no longer has it and the
// overlay does not either: a recall that drops out of the 60-day window is
// kept, from the rows the last extract that had it gave, until the full
// file says otherwise (RATIONALE.md, "Why are the vehicle recalls the
// monthly file overlaid by the daily extract?").

// overlayDocs returns the base and the overlay of a source with an overlay
// document; ok is false for any other.
func (s *Source) overlayDocs() (base, over Doc, ok bool) {
	if len(s.Docs) != 2 {
		return Doc{}, Doc{}, false
	}
	for i, d := range s.Docs {
		if d.Overlay {
			return s.Docs[1-i], d, true
		}
	}
	return Doc{}, Doc{}, false
}

// askFor is what the conditional request for d sends, prev its last state.
func askFor(d Doc, prev rappel.FileState) rappel.FileState {
	if d.Unconditional {
		prev.ETag, prev.LastModified = "", ""
	}
	return prev
}

// planOverlay plans a refresh of src, whose documents are base and its
// overlay over.
func (r *Refresher) planOverlay(ctx context.Context, src *Source, st rappel.SourceState, base, over Doc) (*plan, error) {
	synth, err := r.synthetic(ctx)
	if err != nil {
		return nil, err
	}
	// Live records of this source stand in for a base not fetched; over
	// the bundle's (synthetic or not), the base replaces them.
	live := st.Feed.Live && !synth
	p := &plan{src: src, st: st, whole: true}
	p.st.Files = map[string]rappel.FileState{}
	now := r.Now()

	prev := st.Files[base.Name]
	var baseBody []byte
	if live && base.Every > 0 && prev.URL == base.URL && !prev.FetchedAt.IsZero() && now.Sub(prev.FetchedAt) < base.Every {
		p.st.Files[base.Name] = prev // not due
	} else {
		resp, err := r.fetchDoc(ctx, base, askFor(base, prev), nil)
		if err != nil {
			return nil, err
		}
		fs := resp.State
		fs.FetchedAt = now
		p.st.Files[base.Name] = fs
		if !resp.NotModified && (!live || prev.URL != base.URL || prev.SHA256 != fs.SHA256) {
			baseBody = resp.Body
		}
	}

	oprev := st.Files[over.Name]
	var overBody []byte
	var overErr error
	overSame := false // not modified, or the same body
	resp, err := r.fetchDoc(ctx, over, askFor(over, oprev), nil)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, err
	case err != nil:
		overErr = err
		p.st.Files[over.Name] = oprev
	default:
		p.st.Files[over.Name] = resp.State
		if !resp.NotModified {
			overBody = resp.Body
		}
		overSame = resp.NotModified || oprev.URL == over.URL && oprev.SHA256 == resp.State.SHA256
	}
	if baseBody == nil && (overSame || overErr != nil) && live && len(st.Files) > 0 && !r.pluginChanged(src, st) {
		p.unchanged = true
		p.overlayProblem(base, over, overErr)
		return p, nil
	}
	if p.old, err = r.rawIndex(ctx, src.Name); err != nil {
		return nil, err
	}
	if baseBody == nil && (!live || len(p.old) == 0) {
		// Nothing stored to stand in for the base: fetched again whole.
		if baseBody, err = r.fetchWhole(ctx, base, p); err != nil {
			return nil, err
		}
	}
	if baseBody != nil && overErr == nil && resp.NotModified {
		// A new base needs its overlay: fetched again whole.
		overBody, overErr = r.fetchWhole(ctx, over, p)
		if overErr != nil && ctx.Err() != nil {
			return nil, overErr
		}
	}

	p.cur = make(map[string]rappel.RawRecord, len(p.old))
	baseNew := baseBody != nil
	if baseNew {
		docs := map[string][]byte{base.Name: baseBody}
		baseBody = nil
		recs, err := src.format.split(docs)
		if err != nil {
			return nil, rappel.Fail(rappel.FailureParse, err)
		}
		releaseDocs(docs)
		for _, rec := range recs {
			p.cur[rec.Key] = rec
		}
	} else {
		for k, o := range p.old {
			p.cur[k] = o
		}
	}
	if overErr == nil {
		overErr = p.overlay(base.Name, overBody)
	}
	if overErr != nil {
		p.st.Files[over.Name] = oprev // tried again at the next refresh
		if baseNew {
			// A new base without its overlay cannot say which keys left:
			// at its next fetch it counts as new again, to be applied
			// with the overlay.
			prev.URL, prev.FetchedAt = base.URL, p.st.Files[base.Name].FetchedAt
			p.st.Files[base.Name] = prev
		}
		for k, o := range p.old {
			if _, ok := p.cur[k]; !ok {
				p.cur[k] = o
			}
		}
		p.overlayProblem(base, over, overErr)
	}
	if err := r.upgradeHashes(ctx, p); err != nil {
		return nil, err
	}
	return p, nil
}

// fetchWhole fetches d unconditionally, for a refresh that needs its body
// though it was not modified, and records its state in p.
func (r *Refresher) fetchWhole(ctx context.Context, d Doc, p *plan) ([]byte, error) {
	resp, err := r.fetchDoc(ctx, d, rappel.FileState{}, nil)
	if err != nil {
		return nil, err
	}
	if resp.NotModified {
		return nil, rappel.Fail(rappel.FailureFetch, fmt.Errorf("fetching %s again whole: the upstream answered 304 Not Modified", d.URL))
	}
	fs := resp.State
	fs.FetchedAt = r.Now()
	p.st.Files[d.Name] = fs
	return resp.Body, nil
}

// overlay splits the overlay document body (nil: none to apply), in the
// format of the base document base, and puts its raw records in place of those of the same
// key. It fails, changing nothing, when the overlay is not in the format or
// its structure (a CSV's header) is not the base's: its rows would be read
// under the wrong columns.
func (p *plan) overlay(base string, body []byte) error {
	if body == nil {
		return nil
	}
	recs, err := p.src.format.split(map[string][]byte{base: body})
	if err != nil {
		return err
	}
	for _, rec := range recs {
		if !structural(rec.Key) {
			continue
		}
		if b, ok := p.cur[rec.Key]; !ok || b.Hash != rec.Hash {
			return fmt.Errorf("its %s is not the one of %s: its rows would be read under other columns", rec.Key[len(structuralPrefix):], base)
		}
	}
	for _, rec := range recs {
		if !structural(rec.Key) {
			p.cur[rec.Key] = rec
		}
	}
	return nil
}

// overlayProblem records, when err is set, that the overlay over could not
// be used in this refresh.
func (p *plan) overlayProblem(base, over Doc, err error) {
	if err == nil {
		return
	}
	p.problems = append(p.problems, rappel.Problem{Source: p.src.Name, Reason: fmt.Sprintf(
		"%s (%s) could not be used in this refresh: %s The records stand as %s and the last usable %s made them.",
		over.Name, rappel.PublicURL(over.URL), errorSentence(err), base.Name, over.Name)})
}
