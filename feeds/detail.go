package feeds

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/rappel-ca/rappel"
)

// detailFormat holds one notice's detail documents per raw record: the
// English one and the French one, each possibly absent.
type detailFormat struct{}

func (detailFormat) split(docs map[string][]byte) ([]rappel.RawRecord, error) {
	byNID := map[string][2][][]byte{}
	for _, name := range sortedKeys(docs) {
		dir, file := path.Split(name)
		nid, ok := strings.CutSuffix(file, ".json")
		if !ok {
			if nid, ok = strings.CutSuffix(file, ".html"); !ok {
				continue
			}
		}
		pair := byNID[nid]
		switch dir {
		case "en/":
			pair[0] = append(pair[0], docs[name])
		case "fr/":
			pair[1] = append(pair[1], docs[name])
		default:
			continue
		}
		byNID[nid] = pair
	}
	out := make([]rappel.RawRecord, 0, len(byNID))
	for nid, pair := range byNID {
		ids := []string{rappel.HealthRecordID(nid)}
		out = append(out, newRaw(detailFormat{}, nid, ids, pair[0], pair[1]))
	}
	sortRaw(out)
	return out, nil
}

// detailRaw is the raw record of a notice's documents; nil is absent.
func detailRaw(nid string, en, fr []byte) rappel.RawRecord {
	lists := [2][][]byte{}
	var ids []string
	for i, doc := range [][]byte{en, fr} {
		if doc != nil {
			lists[i] = [][]byte{doc}
			ids = []string{rappel.HealthRecordID(nid)}
		}
	}
	return newRaw(detailFormat{}, nid, ids, lists[0], lists[1])
}

func (detailFormat) canonical(doc []byte) []byte { return canonicalJSON(doc) }

func (detailFormat) join(recs []rappel.RawRecord) (map[string][]byte, error) {
	docs := make(map[string][]byte, 2*len(recs))
	for _, r := range recs {
		// A notice's documents in one language: the old API's JSON, its
		// recall page, or both; a third list, of a fetch of pages, holds
		// their validators and is no document.
		lists, err := rawLists(r)
		if err == nil && len(lists) == 3 {
			lists = lists[:2]
		} else if lists, err = listsOf(r, 2); err != nil {
			return nil, err
		}
		for i, lang := range rappel.Langs {
			for _, doc := range lists[i] {
				ext := ".json"
				if isPage(doc) {
					ext = ".html"
				}
				docs[lang+"/"+r.Key+ext] = doc
			}
		}
	}
	return docs, nil
}

// fetchDetails fetches the detail documents of the notices in nids, in
// that order (detailOrder), with at most DetailConcurrency requests at a
// time and DetailRate a second, until ctx is done. It returns the raw
// records of the notices whose documents it got (a 404 is a document that
// does not exist) and a problem for each notice it could not get; notices
// it had no time for are in neither and stay pending.
func (r *Refresher) fetchDetails(ctx context.Context, src *Source, nids []string, versions map[string]string, hints map[string]noticeHint) ([]rappel.RawRecord, []rappel.Problem) {
	got, problems, _ := r.fetchNotices(ctx, src, nids, versions, hints)
	return got, problems
}

// fetchNotices is fetchDetails, with the reason of each problem's
// failure, in the problems' order.
func (r *Refresher) fetchNotices(ctx context.Context, src *Source, nids []string, versions map[string]string, hints map[string]noticeHint) ([]rappel.RawRecord, []rappel.Problem, []rappel.FeedFailure) {
	var (
		mu       sync.Mutex
		got      []rappel.RawRecord
		problems []rappel.Problem
		reasons  []rappel.FeedFailure
		wg       sync.WaitGroup
	)
	tick := newLimiter(r.DetailRate)
	defer tick.stop()
	work := make(chan string)
	for range max(1, r.DetailConcurrency) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for nid := range work {
				raw, err := r.fetchNotice(ctx, src, nid, tick, hints[nid])
				mu.Lock()
				if err != nil {
					if ctx.Err() == nil {
						problems = append(problems, rappel.Problem{Source: src.Name, RecordID: rappel.HealthRecordID(nid), Reason: err.Error() + "; it is tried again at the next refresh."})
						reasons = append(reasons, failureOf(err))
					}
				} else {
					raw.Version = versions[nid]
					got = append(got, raw)
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for _, nid := range nids {
		if ctx.Err() != nil {
			break // a spent budget fetches nothing more, whatever select picks
		}
		select {
		case work <- nid:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	sortRaw(got)
	return got, problems, reasons
}

// fetchNotice fetches a notice's detail: its recall pages first from
// src.PageFrom on, the old API's documents first before, and the other when
// the first has no document in either language (pages.go).
func (r *Refresher) fetchNotice(ctx context.Context, src *Source, nid string, tick *limiter, hint noticeHint) (rappel.RawRecord, error) {
	if src.Page == "" {
		raw, _, err := r.fetchAPI(ctx, src, nid, tick)
		return raw, err
	}
	first, second := func() (rappel.RawRecord, bool, error) { return r.fetchAPI(ctx, src, nid, tick) },
		func() (rappel.RawRecord, bool, error) { return r.fetchPages(ctx, src, nid, tick, hint) }
	if src.pageFirst(nid) {
		first, second = second, first
	}
	raw, found, err := first()
	if err != nil || found {
		return raw, err
	}
	raw, _, err = second()
	return raw, err
}

// fetchAPI fetches a notice's English and French documents from the old
// detail API; found is false when neither exists.
func (r *Refresher) fetchAPI(ctx context.Context, src *Source, nid string, tick *limiter) (rappel.RawRecord, bool, error) {
	var docs [2][]byte
	for i, lang := range rappel.Langs {
		if err := tick.wait(ctx); err != nil {
			return rappel.RawRecord{}, false, err
		}
		u := strings.NewReplacer("{id}", nid, "{lang}", lang).Replace(src.Template)
		resp, err := r.Fetcher.Get(ctx, u, rappel.FileState{})
		if err != nil {
			return rappel.RawRecord{}, false, fmt.Errorf("fetching the %s detail document of notice %s: %w", lang, nid, err)
		}
		if resp.NotFound {
			continue
		}
		if !json.Valid(resp.Body) {
			return rappel.RawRecord{}, false, rappel.Fail(rappel.FailureParse, fmt.Errorf("fetching the %s detail document of notice %s: the document is not JSON: %s", lang, nid, describe(resp.Body)))
		}
		docs[i] = resp.Body
	}
	return detailRaw(nid, docs[0], docs[1]), docs[0] != nil || docs[1] != nil, nil
}

// compareNIDDesc orders NIDs, numbers written in digits, largest first.
func compareNIDDesc(a, b string) int {
	if len(a) != len(b) {
		return len(b) - len(a)
	}
	return strings.Compare(b, a)
}

// limiter lets through at most rate events a second; a rate of 0 or less
// lets everything through.
type limiter struct {
	t *time.Ticker
}

func newLimiter(rate float64) *limiter {
	if rate <= 0 {
		return &limiter{}
	}
	return &limiter{t: time.NewTicker(time.Duration(float64(time.Second) / rate))}
}

func (l *limiter) wait(ctx context.Context) error {
	if l.t == nil {
		return ctx.Err()
	}
	select {
	case <-l.t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *limiter) stop() {
	if l.t != nil {
		l.t.Stop()
	}
}
