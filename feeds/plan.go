package feeds

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rappel-ca/rappel"
)

// plan is a source's refresh once fetched: the raw records as they now
// stand, against those stored.
type plan struct {
	src *Source
	// st is the state to write on success.
	st rappel.SourceState
	// old is the stored raw index, by key; cur the raw records as they now
	// stand, by key, with Data at least on those new or changed.
	old, cur map[string]rappel.RawRecord
	// unchanged is set when nothing changed upstream: no parsing, no
	// normalizing, only the state is written.
	unchanged bool
	// rehashed are the keys of the stored raw records whose hash of the
	// first definition (byteHash) was found to be of the same content as
	// now: their index takes the content hash, their data stays.
	rehashed map[string]bool
	// problems are per-record failures of the fetch (detail documents);
	// attempted are the record_ids they were for.
	problems  []rappel.Problem
	attempted map[string]bool
	// whole is set for a source fetched whole: its documents, what a
	// candidate plugin is tried on when the active plugin fails on them,
	// are written again from cur (docs). They are not kept as fetched: of
	// the vehicle file that would be a second copy of 207 MB for the
	// whole refresh.
	whole bool
	// took is how long each step took, for the log.
	took timings
	// rejected counts the records this refresh rejected (keepProblems).
	rejected int
}

// timings are the durations of a refresh's steps.
type timings struct {
	fetch, normalize, assemble, write time.Duration
	normalized                        int // raw records normalized
}

// LogValue logs the steps as durations, not strings, so that a JSON log
// writes them as seconds like every other duration.
func (t timings) LogValue() slog.Value {
	r := func(key string, d time.Duration) slog.Attr { return slog.Duration(key, d.Round(time.Millisecond)) }
	return slog.GroupValue(r("fetch", t.fetch), r("normalize", t.normalize),
		slog.Int("normalized", t.normalized), r("assemble", t.assemble), r("write", t.write))
}

// planDocs fetches a source's documents, conditionally, and splits them
// into raw records. A document the upstream says is not modified (304) is
// rebuilt from the stored raw records when the rest needs it.
//
// The documents fetched count against the source's budget (Source.Budget);
// a refresh that fails after reading large ones gives their memory back
// at once, as releaseDocs does after one that succeeds.
func (r *Refresher) planDocs(ctx context.Context, src *Source, st rappel.SourceState) (_ *plan, err error) {
	if base, over, ok := src.overlayDocs(); ok {
		return r.planOverlay(ctx, src, st, base, over)
	}
	docs := map[string][]byte{}
	spent := &reading{source: src.Name, budget: src.Budget}
	defer func() {
		if err != nil {
			spent.release(docs)
		}
	}()
	files := map[string]rappel.FileState{}
	same := true
	var missing []Doc
	var problems []rappel.Problem
	for _, d := range src.Docs {
		prev := st.Files[d.Name]
		ask := prev
		if d.Unconditional {
			ask.ETag, ask.LastModified = "", ""
		}
		resp, err := r.fetchDoc(ctx, d, ask, spent)
		if err != nil {
			return nil, err
		}
		switch {
		case resp.NotModified:
			missing = append(missing, d)
		default:
			docs[d.Name] = resp.Body
			same = same && prev.URL == d.URL && prev.SHA256 == resp.State.SHA256
		}
		files[d.Name] = resp.State
	}
	// A document not modified since a refresh that read its fallback in
	// its place is still broken: the fallback, asked for conditionally,
	// stands in again.
	for i := 0; i < len(missing); {
		d := missing[i]
		if _, used := st.Files[fallbackName(d)]; !used {
			i++
			continue
		}
		doc, pr, err := r.standIn(ctx, src, d, st.Files, files, nil, true)
		if err != nil {
			return nil, err
		}
		problems = append(problems, pr...)
		if doc == nil {
			i++ // the fallback is not modified either: rebuilt with the others, when needed
			continue
		}
		docs[d.Name] = doc
		same = same && files[d.Fallback.Name].SHA256 == st.Files[d.Fallback.Name].SHA256
		missing = append(missing[:i], missing[i+1:]...)
	}
	p := &plan{src: src, st: st, problems: problems}
	p.st.Files = files
	// A live source with remembered files has its raw records stored (the
	// same batch wrote both): nothing more to read when nothing changed.
	// Over synthetic data nothing counts as unchanged: the refresh must
	// replace it (switch.go), as it does for a store written before
	// datasets had a kind, whose sources may have gone live already.
	synth, err := r.synthetic(ctx)
	if err != nil {
		return nil, err
	}
	if same && st.Feed.Live && len(st.Files) > 0 && !r.pluginChanged(src, st) && !synth {
		p.unchanged = true
		return p, nil
	}
	old, err := r.rawIndex(ctx, src.Name)
	if err != nil {
		return nil, err
	}
	p.old = old
	if len(missing) > 0 {
		if err := r.fillMissing(ctx, src, docs, files, missing, spent); err != nil {
			return nil, err
		}
	}
	recs, err := r.split(ctx, p, docs, st.Files)
	if err != nil {
		return nil, err
	}
	releaseDocs(docs)
	p.whole = true
	p.cur = make(map[string]rappel.RawRecord, len(recs))
	for _, rec := range recs {
		p.cur[rec.Key] = rec
	}
	if err := r.upgradeHashes(ctx, p); err != nil {
		return nil, err
	}
	return p, nil
}

// bigDocs is the size of documents past which releaseDocs gives their
// memory back to the system at once.
const bigDocs = 32 << 20

// releaseDocs drops the documents once split: the raw records hold their
// bytes packed. Large ones (the vehicle file is 207 MB) are given back to
// the system at once, so that the plugin processes the refresh starts next
// do not run beside a server still holding their pages: the collector
// would leave them to the scavenger for minutes.
func releaseDocs(docs map[string][]byte) {
	size := 0
	for _, b := range docs {
		size += len(b)
	}
	clear(docs)
	if size > bigDocs {
		debug.FreeOSMemory()
	}
}

// docs writes the source's documents again from its raw records as they
// now stand, for a candidate plugin to be tried on; nil for a detail
// source, or when they cannot be.
func (p *plan) docs() map[string][]byte {
	if p == nil || !p.whole {
		return nil
	}
	recs := make([]rappel.RawRecord, 0, len(p.cur))
	for _, k := range sortedKeys(p.cur) {
		if p.cur[k].Data == nil {
			return nil
		}
		recs = append(recs, p.cur[k])
	}
	docs, err := p.src.format.join(recs)
	if err != nil {
		return nil
	}
	return docs
}

// split splits p's documents; a document that is not in its format at all
// and has a fallback is read from the fallback instead, with a problem
// saying so. prev are the documents' states after the last refresh.
func (r *Refresher) split(ctx context.Context, p *plan, docs map[string][]byte, prev map[string]rappel.FileState) ([]rappel.RawRecord, error) {
	read := map[string]bool{}
	for {
		recs, err := p.src.format.split(docs)
		var broken *brokenDoc
		if err == nil || !errors.As(err, &broken) {
			return recs, rappel.Fail(rappel.FailureParse, err)
		}
		i := slices.IndexFunc(p.src.Docs, func(d Doc) bool { return d.Name == broken.name })
		if i < 0 || p.src.Docs[i].Fallback == nil || read[broken.name] {
			return nil, rappel.Fail(rappel.FailureParse, err)
		}
		d := p.src.Docs[i]
		doc, pr, err := r.standIn(ctx, p.src, d, prev, p.st.Files, broken, false)
		if err != nil {
			return nil, err
		}
		docs[d.Name], read[d.Name] = doc, true
		p.problems = append(p.problems, pr...)
	}
}

// fallbackName is the name of d's fallback; "" when it has none.
func fallbackName(d Doc) string {
	if d.Fallback == nil {
		return ""
	}
	return d.Fallback.Name
}

// standIn fetches the fallback of d, conditionally when the last
// refresh read it, and returns it written as d, with the problem that
// says so. prev are the documents' states after the last refresh. broken
// is why d itself cannot be read; nil when d was not modified since a
// refresh that read its fallback. A fallback not modified
// either gives no document when lazy is set (the stored raw records hold
// its rows, rebuilt only when needed), and otherwise d as rebuilt from
// them, or the fallback fetched again whole when there are none. files
// takes the fallback's state, which the next refresh asks with.
func (r *Refresher) standIn(ctx context.Context, src *Source, d Doc, prevFiles, files map[string]rappel.FileState, broken *brokenDoc, lazy bool) ([]byte, []rappel.Problem, error) {
	fb := *d.Fallback
	// The document itself does not parse, whatever keeps its fallback
	// from standing in; one not modified since fails as its fallback does.
	fail := func(err error) error {
		if broken == nil {
			return fmt.Errorf("%s was not modified since a refresh that read %s in its place, which now fails: %w", d.Name, fb.Name, err)
		}
		return rappel.Fail(rappel.FailureParse, fmt.Errorf("%w; its fallback %s could not stand in: %v", broken, fb.Name, err))
	}
	prev, used := prevFiles[fb.Name]
	ask := rappel.FileState{}
	if used && !fb.Unconditional {
		ask = prev
	}
	resp, err := r.fetchDoc(ctx, fb, ask, nil)
	if err != nil {
		return nil, nil, fail(err)
	}
	var doc []byte
	var reading []string
	if resp.NotModified {
		files[fb.Name] = prev
		if lazy {
			return nil, []rappel.Problem{standInProblem(src, d, broken, prev, nil)}, nil
		}
		if doc, err = r.rebuiltDoc(ctx, src, d.Name); err != nil {
			return nil, nil, fail(err)
		}
		if doc == nil {
			if resp, err = r.fetchDoc(ctx, fb, rappel.FileState{}, nil); err != nil {
				return nil, nil, fail(err)
			}
			if resp.NotModified {
				return nil, nil, fail(rappel.Fail(rappel.FailureFetch, errors.New("fetched again whole, the upstream answered 304")))
			}
		}
	}
	if doc == nil {
		if doc, reading, err = src.format.(fallbackFormat).fromFallback(d.Name, resp.Body); err != nil {
			return nil, nil, fail(rappel.Fail(rappel.FailureParse, fmt.Errorf("reading %s from %s: %w", fb.Name, fb.URL, err)))
		}
		files[fb.Name] = resp.State
	}
	return doc, []rappel.Problem{standInProblem(src, d, broken, files[fb.Name], reading)}, nil
}

// standInProblem says that d's fallback was read in its place, as last
// modified upstream (state), and what reading it found.
func standInProblem(src *Source, d Doc, broken *brokenDoc, state rappel.FileState, reading []string) rappel.Problem {
	fb := d.Fallback
	var b strings.Builder
	if broken != nil {
		fmt.Fprintf(&b, "%s (%s) does not parse: %s. Its other form of the same day, %s (%s", d.Name, spanURL(d.URL), broken.reason, fb.Name, spanURL(fb.URL))
	} else {
		fmt.Fprintf(&b, "%s (%s) is not modified since it did not parse, and its other form, %s (%s", d.Name, spanURL(d.URL), fb.Name, spanURL(fb.URL))
	}
	if state.LastModified != "" {
		fmt.Fprintf(&b, ", last modified %s", state.LastModified)
	}
	b.WriteString("), was read in its place")
	if len(reading) > 0 {
		b.WriteString("; reading it, " + strings.Join(reading, "; "))
	}
	b.WriteString(".")
	return rappel.Problem{Source: src.Name, Reason: b.String()}
}

// rebuiltDoc returns the document name of src as rebuilt from its stored
// raw records; nil when none are stored.
func (r *Refresher) rebuiltDoc(ctx context.Context, src *Source, name string) ([]byte, error) {
	var stored []rappel.RawRecord
	if err := r.store().RawData(ctx, src.Name, func(raw rappel.RawRecord) error {
		stored = append(stored, raw)
		return nil
	}); err != nil {
		return nil, err
	}
	if len(stored) == 0 || stored[0].Data == nil {
		return nil, nil
	}
	docs, err := src.format.join(stored)
	if err != nil {
		return nil, storage(err)
	}
	return docs[name], nil
}

// fetchDoc fetches one of a source's documents, conditionally on ask, under
// its own size cap, and checks that it is in its format. A 404 is an
// error: a source fetched whole always has its documents. A document of a
// plugin's manifest is fetched under the manifest rules (GetManifest).
// spent, when not nil, counts what is read against the source's budget,
// which may cap the document below its own cap.
func (r *Refresher) fetchDoc(ctx context.Context, d Doc, ask rappel.FileState, spent *reading) (*Response, error) {
	limit := r.Fetcher.MaxBody
	if d.MaxBytes > 0 {
		limit = d.MaxBytes
	}
	limit, byBudget := spent.limit(limit)
	if byBudget && limit <= 0 {
		return nil, rappel.Fail(rappel.FailureFetch, spent.exceeded(d, 0))
	}
	get := r.Fetcher.GetLimited
	if d.FromManifest {
		get = r.Fetcher.GetManifest
	}
	resp, err := get(ctx, d.URL, ask, limit)
	var cut tooLarge
	switch {
	case errors.As(err, &cut):
		spent.add(cut.cap)
		if byBudget {
			return nil, rappel.Fail(rappel.FailureFetch, spent.exceeded(d, cut.cap))
		}
		return nil, err
	case err != nil:
		return nil, err
	case resp.NotFound:
		return nil, rappel.Fail(rappel.FailureFetch, fmt.Errorf("fetching %s: the upstream answered 404 Not Found", d.URL))
	case !resp.NotModified:
		spent.add(int64(len(resp.Body)))
		if err := checkFormat(d, resp.Body); err != nil {
			return nil, rappel.Fail(rappel.FailureParse, err)
		}
	}
	return resp, nil
}

// reading counts the bytes one refresh of a source read of its documents,
// after decompression, against the source's budget (0 for none). Its
// methods take a nil reading as one without a budget that counts nothing.
type reading struct {
	source       string
	budget, read int64
}

// limit returns the cap of a document whose own cap is own (0 for none):
// what is left of the budget when that is less, and then byBudget.
func (b *reading) limit(own int64) (limit int64, byBudget bool) {
	if b == nil || b.budget <= 0 {
		return own, false
	}
	left := b.budget - b.read
	if own > 0 && own <= left {
		return own, false
	}
	return left, true
}

func (b *reading) add(n int64) {
	if b != nil {
		b.read += n
	}
}

// exceeded says that d, cut after cut bytes, takes the source's documents
// past its budget.
func (b *reading) exceeded(d Doc, cut int64) error {
	return fmt.Errorf("refused to read %s (%s) whole: the documents of %s come to more than %s, the most one refresh of the source may fetch after decompression (%s read of the documents before it, %s of this one when it was cut); the last good data keeps serving",
		d.Name, spanURL(d.URL), b.source, byteSize(b.budget), byteSize(b.read-cut), byteSize(cut))
}

// release drops the documents of a failed refresh and, when it read more
// than bigDocs, gives their memory back to the system at once (releaseDocs
// says why): a source that fails at every refresh, each time past its
// budget, would otherwise keep the server that much larger between them.
func (b *reading) release(docs map[string][]byte) {
	clear(docs)
	if b.read > bigDocs {
		debug.FreeOSMemory()
	}
}

// byteSize writes n bytes in MiB from 1 MiB on.
func byteSize(n int64) string {
	if n < 1<<20 {
		return strconv.FormatInt(n, 10) + " bytes"
	}
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', -1, 64) + " MiB"
}

// upgradeHashes gives the stored raw records whose hash is of the first
// definition, over their bytes (byteHash), the content hash of what they
// now are when their content is the same: their bytes are the same as
// fetched now, or their stored data has the same content. So the first
// refresh after an upgrade, or over a bundle made before it, normalizes
// and fetches nothing more than before. Stored data that is read is read
// once, only for records whose bytes differ.
func (r *Refresher) upgradeHashes(ctx context.Context, p *plan) error {
	stale := map[string]bool{}
	for k, o := range p.old {
		c, ok := p.cur[k]
		switch {
		case !ok || !byteHash(o.Hash):
		case byteHashOf(c.Data) == o.Hash:
			p.rehash(k, c.Hash)
		default:
			stale[k] = true
		}
	}
	if len(stale) == 0 {
		return nil
	}
	return r.store().RawData(ctx, p.src.Name, func(raw rappel.RawRecord) error {
		if !stale[raw.Key] || raw.Data == nil {
			return nil
		}
		if h, err := dataHash(p.src.format.canonical, raw.Data); err == nil && h == p.cur[raw.Key].Hash {
			p.rehash(raw.Key, h)
		}
		return nil
	})
}

// byteHashOf is the hash of the first definition (byteHash) of a raw
// record's data: over its frame's bytes, as fetched.
func byteHashOf(data []byte) string {
	framed, err := unpack(data)
	if err != nil {
		return ""
	}
	return rappel.HashBytes(framed)
}

// rehash gives the stored raw record of key the content hash h.
func (p *plan) rehash(key, h string) {
	if p.rehashed == nil {
		p.rehashed = map[string]bool{}
	}
	o := p.old[key]
	o.Hash = h
	p.old[key] = o
	p.rehashed[key] = true
}

// fillMissing fills docs with the documents in missing, not modified
// upstream: rebuilt from the stored raw records, or fetched again whole
// when there are none.
func (r *Refresher) fillMissing(ctx context.Context, src *Source, docs map[string][]byte, files map[string]rappel.FileState, missing []Doc, spent *reading) error {
	var stored []rappel.RawRecord
	if err := r.store().RawData(ctx, src.Name, func(raw rappel.RawRecord) error {
		stored = append(stored, raw)
		return nil
	}); err != nil {
		return err
	}
	var rebuilt map[string][]byte
	if len(stored) > 0 {
		var err error
		if rebuilt, err = src.format.join(stored); err != nil {
			return storage(err)
		}
	}
	for _, d := range missing {
		if b, ok := rebuilt[d.Name]; ok {
			docs[d.Name] = b
			continue
		}
		resp, err := r.fetchDoc(ctx, d, rappel.FileState{}, spent)
		if err != nil {
			return err
		}
		if resp.NotModified {
			return rappel.Fail(rappel.FailureFetch, fmt.Errorf("fetching %s again whole: the upstream answered 304", d.URL))
		}
		docs[d.Name], files[d.Name] = resp.Body, resp.State
	}
	return nil
}

// planDetail works out which notices of the followed source need their
// detail documents fetched (new notices, then those whose row's content
// changed), fetches as many as the detail budget allows, and keeps the
// stored raw records of the others. The notices it had no time for are
// not written down: they are found again by the same comparison at the
// next refresh, so neither a budget nor a crash loses any.
func (r *Refresher) planDetail(ctx context.Context, src *Source, st rappel.SourceState) (*plan, error) {
	follow, err := r.store().SourceState(ctx, src.Follows)
	if err != nil {
		return nil, err
	}
	if !follow.Feed.Live {
		return nil, rappel.Fail(rappel.FailureWaiting, fmt.Errorf("waiting for %s's first live refresh: detail documents are fetched for its notices", src.Follows))
	}
	p := &plan{src: src, st: st, attempted: map[string]bool{}}
	version := docsVersion(follow)
	if synth, err := r.synthetic(ctx); err != nil {
		return nil, err
	} else if synth {
		return nil, errAwaitingSwitch
	}
	if st.Feed.Live && st.Followed == version && !r.pluginChanged(src, st) {
		// Caught up with the same notices: nothing to fetch.
		p.unchanged = true
		p.st.Feed.Note = caughtUp(src)
		return p, nil
	}
	wants := map[string]string{} // NID → the hash of its row
	if err := r.store().RawIndex(ctx, src.Follows, func(raw rappel.RawRecord) error {
		if wantsDetail(raw) {
			wants[raw.Key] = raw.Hash
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if p.old, err = r.rawIndex(ctx, src.Name); err != nil {
		return nil, err
	}
	p.cur = make(map[string]rappel.RawRecord, len(wants))
	for nid := range wants {
		if o, ok := p.old[nid]; ok {
			p.cur[nid] = o
		}
	}
	fresh, changed, err := r.pendingDetails(ctx, src, p, wants)
	if err != nil {
		return nil, err
	}
	pending := detailOrder(fresh, changed)
	hints, err := r.pageHints(ctx, src, pending, p.old)
	if err != nil {
		return nil, err
	}
	fctx, stop := r.detailContext(ctx)
	got, problems, reasons := r.fetchNotices(fctx, src, pending, wants, hints)
	stop()
	if err := ctx.Err(); err != nil {
		return nil, rappel.Fail(rappel.FailureFetch, err)
	}
	if err := judgeDetails(got, problems, reasons); err != nil {
		return nil, err
	}
	p.st.Feed.Note = detailNote(src, len(wants), len(pending), len(got)+len(problems))
	p.problems = problems
	for _, pr := range problems {
		p.attempted[pr.RecordID] = true
	}
	for _, raw := range got {
		p.cur[raw.Key] = raw
		p.attempted[rappel.HealthRecordID(raw.Key)] = true
	}
	p.st.Followed = ""
	if left := len(pending) - len(got) - len(problems); left > 0 {
		r.Logger.InfoContext(ctx, "detail documents left for the next refresh", "source", src.Name, "notices", left)
	} else if len(problems) == 0 {
		p.st.Followed = version
	}
	removed := false
	for k := range p.old {
		if _, ok := p.cur[k]; !ok {
			removed = true
			break
		}
	}
	p.unchanged = len(got) == 0 && !removed && len(p.rehashed) == 0 && st.Feed.Live && !r.pluginChanged(src, st)
	return p, nil
}

// minDetailFailures is the fewest failed notices that fail a refresh of
// detail documents in which none succeeded (judgeDetails).
const minDetailFailures = 3

// judgeDetails judges a fetch of detail documents by what it fetched: when
// at least minDetailFailures notices were tried and every one failed, the
// upstream is down or answers nothing readable, and the refresh fails
// with that reason (parse when every notice answered something
// unreadable, else fetch) instead of succeeding with problems. Fewer
// failures, or any notice fetched, leave the failures as problems of
// their notices: one notice whose page is broken must not make the whole
// source stale, and what was fetched is kept (RATIONALE.md, "Why does
// the detail source fail only when every notice it tried failed?").
func judgeDetails(got []rappel.RawRecord, problems []rappel.Problem, reasons []rappel.FeedFailure) error {
	if len(got) > 0 || len(problems) < minDetailFailures {
		return nil
	}
	reason := rappel.FailureParse
	for _, f := range reasons {
		if f != rappel.FailureParse {
			reason = rappel.FailureFetch
		}
	}
	first := slices.MinFunc(problems, func(a, b rappel.Problem) int { return strings.Compare(a.RecordID, b.RecordID) })
	what := "could be fetched"
	if reason == rappel.FailureParse {
		what = "was readable"
	}
	return rappel.Fail(reason, fmt.Errorf("none of the %d notices whose detail documents this refresh tried %s (%s: %s, and %d more); they are tried again at the next refresh",
		len(problems), what, first.RecordID, strings.TrimSuffix(first.Reason, "; it is tried again at the next refresh."), len(problems)-1))
}

// detailNote says, for a fetch of detail documents that fetched nothing,
// why: wants notices want them, pending of them were due, tried were
// tried. It is empty when some were tried.
func detailNote(src *Source, wants, pending, tried int) string {
	switch {
	case tried > 0:
		return ""
	case wants == 0:
		return fmt.Sprintf("Nothing to fetch: %s lists no notice with detail documents.", src.Follows)
	case pending == 0:
		return caughtUp(src)
	}
	return fmt.Sprintf("No detail document fetched: the refresh's time for them ran out before the first; %d notices wait for the next refresh.", pending)
}

// caughtUp is the note of a detail source with nothing left to fetch.
func caughtUp(src *Source) string {
	return fmt.Sprintf("Nothing to fetch: every notice %s lists has the detail documents fetched for its current row.", src.Follows)
}

// pendingDetails returns the notices whose detail documents are to be
// fetched: fresh ones, which have none stored, and changed ones, whose
// stored documents were fetched for a row of other content than now. A
// stored version of the first hash definition (byteHash) is compared with
// the row's stored data (resolveVersions); one found current takes the
// row's content hash in p.cur, and its key goes in p.rehashed.
func (r *Refresher) pendingDetails(ctx context.Context, src *Source, p *plan, wants map[string]string) (fresh, changed []string, err error) {
	mixed := map[string]bool{}
	for nid, v := range wants {
		o, ok := p.old[nid]
		switch {
		case !ok:
			fresh = append(fresh, nid)
		case o.Version == v:
		case byteHash(o.Version) != byteHash(v):
			mixed[nid] = true
		default:
			changed = append(changed, nid)
		}
	}
	if len(mixed) == 0 {
		return fresh, changed, nil
	}
	current, err := r.resolveVersions(ctx, src.Follows, p.old, mixed)
	if err != nil {
		return nil, nil, err
	}
	for nid := range mixed {
		if !current[nid] {
			changed = append(changed, nid)
			continue
		}
		raw := p.cur[nid]
		raw.Version = wants[nid]
		p.cur[nid] = raw
		if p.rehashed == nil {
			p.rehashed = map[string]bool{}
		}
		p.rehashed[nid] = true
	}
	return fresh, changed, nil
}

// resolveVersions reports which of the notices in nids have detail
// documents fetched for the row the followed source stores: their version,
// of one hash definition, is the hash of that definition of the row's
// stored data. The followed source keeps a row's bytes while its content
// is unchanged (addRaw), so a version of the first definition still
// matches them after the row's hash was upgraded.
func (r *Refresher) resolveVersions(ctx context.Context, follows string, old map[string]rappel.RawRecord, nids map[string]bool) (map[string]bool, error) {
	i := slices.IndexFunc(r.Sources, func(s *Source) bool { return s.Name == follows })
	if i < 0 {
		return nil, nil
	}
	canon := r.Sources[i].format.canonical
	current := map[string]bool{}
	err := r.store().RawData(ctx, follows, func(raw rappel.RawRecord) error {
		if !nids[raw.Key] || raw.Data == nil {
			return nil
		}
		v := old[raw.Key].Version
		if byteHash(v) {
			current[raw.Key] = byteHashOf(raw.Data) == v
		} else if h, err := dataHash(canon, raw.Data); err == nil {
			current[raw.Key] = h == v
		}
		return nil
	})
	return current, err
}

// detailOrder is the order notices' detail documents are fetched in: new
// notices first, whose records wait for them, newest first; then changed
// ones, newest first.
func detailOrder(fresh, changed []string) []string {
	slices.SortFunc(fresh, compareNIDDesc)
	slices.SortFunc(changed, compareNIDDesc)
	return append(fresh, changed...)
}

// detailContext returns the context detail documents are fetched under:
// done after DetailBudget, or two thirds of the time ctx has left (the
// rest is for normalizing and writing), or when a refresh is asked for
// (Kick, Trigger), so that fetching never holds one back. stop releases
// it.
func (r *Refresher) detailContext(ctx context.Context) (fctx context.Context, stop func()) {
	deadline := time.Now().Add(r.DetailBudget)
	if dl, ok := ctx.Deadline(); ok {
		if share := time.Now().Add(time.Until(dl) * 2 / 3); share.Before(deadline) {
			deadline = share
		}
	}
	fctx, cancel := context.WithDeadline(ctx, deadline)
	r.smu.Lock()
	r.yieldDetails = cancel
	r.smu.Unlock()
	return fctx, func() {
		r.smu.Lock()
		r.yieldDetails = nil
		r.smu.Unlock()
		cancel()
	}
}

// wantsDetail reports that a notice of the dump has detail documents to
// fetch: every notice but Transport Canada's (whose record is tc-<rn>), by
// its NID, a number.
func wantsDetail(raw rappel.RawRecord) bool {
	return raw.Key != "" && strings.Trim(raw.Key, "0123456789") == "" && len(raw.IDs) == 1 && raw.IDs[0] == rappel.HealthRecordID(raw.Key)
}

// docsVersion identifies a source's documents as last fetched.
func docsVersion(st rappel.SourceState) string {
	var b strings.Builder
	for _, name := range sortedKeys(st.Files) {
		b.WriteString(name + "=" + st.Files[name].SHA256 + ";")
	}
	return rappel.HashBytes([]byte(b.String()))
}

// rawIndex reads the stored raw index of source, by key.
func (r *Refresher) rawIndex(ctx context.Context, source string) (map[string]rappel.RawRecord, error) {
	out := map[string]rappel.RawRecord{}
	err := r.store().RawIndex(ctx, source, func(raw rappel.RawRecord) error {
		out[raw.Key] = raw
		return nil
	})
	return out, err
}

// pluginChanged reports that the plugin a run of src would use is not the
// one that made its stored partial records.
func (r *Refresher) pluginChanged(src *Source, st rappel.SourceState) bool {
	if r.ActivePlugin == nil || st.Plugin == "" {
		return false
	}
	a := r.ActivePlugin(src.Name)
	return a != "" && a != st.Plugin
}
