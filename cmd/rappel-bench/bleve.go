package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/blevesearch/bleve/v2"
	_ "github.com/blevesearch/bleve/v2/analysis/analyzer/custom" // registers custom analyzers
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	_ "github.com/blevesearch/bleve/v2/analysis/char/asciifolding" // registers asciifolding
	_ "github.com/blevesearch/bleve/v2/analysis/lang/en"           // registers the English filters
	_ "github.com/blevesearch/bleve/v2/analysis/lang/fr"           // registers the French filters
	_ "github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	_ "github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/rappel-ca/rappel"
)

// bleveMapping indexes each record as rappel's index does: English text
// with English stems, French text with French stems (both with the
// language-neutral text, accents folded), and the filter, sort and lookup
// fields as keywords.
func bleveMapping() (mapping.IndexMapping, error) {
	im := bleve.NewIndexMapping()
	for name, filters := range map[string][]string{
		"en_fold": {"possessive_en", "to_lower", "stop_en", "stemmer_en_snowball"},
		"fr_fold": {"elision_fr", "to_lower", "stop_fr", "stemmer_fr_light"},
	} {
		if err := im.AddCustomAnalyzer(name, map[string]any{
			"type": "custom", "char_filters": []string{"asciifolding"},
			"tokenizer": "unicode", "token_filters": filters,
		}); err != nil {
			return nil, fmt.Errorf("adding analyzer %s: %w", name, err)
		}
	}
	doc := bleve.NewDocumentStaticMapping()
	text := func(analyzer string) *mapping.FieldMapping {
		f := bleve.NewTextFieldMapping()
		f.Analyzer, f.Store, f.IncludeInAll, f.DocValues = analyzer, false, false, false
		f.IncludeTermVectors = true // phrase queries need positions
		return f
	}
	kw := func(docValues bool) *mapping.FieldMapping {
		f := bleve.NewKeywordFieldMapping()
		f.Analyzer, f.Store, f.IncludeInAll, f.IncludeTermVectors, f.DocValues = keyword.Name, false, false, false, docValues
		return f
	}
	doc.AddFieldMappingsAt("text_en", text("en_fold"))
	doc.AddFieldMappingsAt("text_fr", text("fr_fold"))
	for _, f := range []string{"record_id", "event_date", "recall_type"} {
		doc.AddFieldMappingsAt(f, kw(true)) // sorted on or faceted on
	}
	for _, f := range []string{"agency", "hazard_class", "gtin", "vkey"} {
		doc.AddFieldMappingsAt(f, kw(false))
	}
	im.DefaultMapping = doc
	return im, nil
}

// bleveDoc is what is indexed of a record.
func bleveDoc(r *rappel.Record) map[string]any {
	en, fr := docText(r)
	return map[string]any{
		"record_id": r.RecordID, "event_date": r.EventDate, "recall_type": r.RecallType,
		"agency": r.Agency, "hazard_class": r.HazardClass, "text_en": en, "text_fr": fr,
		"gtin": uniq(gtins(r)), "vkey": uniq(vehicleKeys(r)),
	}
}

// runBleve is `rappel-bench bleve -index DIR -addr HOST:PORT`: it indexes
// the embedded bundle's records into DIR unless an index is there, then
// serves. Record bodies are kept in memory, encoded once, as rappel keeps
// them.
func runBleve(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("rappel-bench bleve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("index", "", "`directory` of the index; built when missing")
	addr := fs.String("addr", "127.0.0.1:0", "`host:port` to listen on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	recs, bodies, err := bundleRecords()
	if err != nil {
		return err
	}
	idx, err := openBleve(*dir, recs, log)
	if err != nil {
		return err
	}
	defer idx.Close()
	return serveHTTP(ctx, *addr, newBlevePeer(idx, recs, bodies).routes(), log)
}

// newBlevePeer serves idx, which holds recs; bodies are their JSON.
func newBlevePeer(idx bleve.Index, recs []*rappel.Record, bodies map[string][]byte) *blevePeer {
	p := &blevePeer{idx: idx, bodies: bodies, recs: map[string]*rappel.Record{}, now: time.Now}
	for _, r := range recs {
		p.recs[r.RecordID] = r
	}
	return p
}

// openBleve opens the index in dir, building it from recs when missing.
func openBleve(dir string, recs []*rappel.Record, log *slog.Logger) (bleve.Index, error) {
	if idx, err := bleve.Open(dir); err == nil {
		return idx, nil
	} else if !errors.Is(err, bleve.ErrorIndexPathDoesNotExist) {
		return nil, fmt.Errorf("opening bleve index: %w", err)
	}
	start := time.Now()
	m, err := bleveMapping()
	if err != nil {
		return nil, err
	}
	os.RemoveAll(dir)
	idx, err := bleve.New(dir, m)
	if err != nil {
		return nil, fmt.Errorf("creating bleve index: %w", err)
	}
	b := idx.NewBatch()
	for i, r := range recs {
		if err := b.Index(r.RecordID, bleveDoc(r)); err != nil {
			return nil, fmt.Errorf("indexing %s: %w", r.RecordID, err)
		}
		if b.Size() == 1000 || i == len(recs)-1 {
			if err := idx.Batch(b); err != nil {
				return nil, fmt.Errorf("indexing batch: %w", err)
			}
			b.Reset()
		}
	}
	log.Info("indexed records into bleve", "records", len(recs), "took", time.Since(start).Round(time.Millisecond))
	return idx, nil
}

// blevePeer answers the query set from a Bleve index.
type blevePeer struct {
	idx    bleve.Index
	bodies map[string][]byte
	recs   map[string]*rappel.Record
	now    func() time.Time
}

func (p *blevePeer) routes() http.Handler { return peerRoutes(p) }

// record reads the record through the index (a document id query), as a
// Bleve deployment that keeps its bodies beside the index would.
func (p *blevePeer) record(r *http.Request) ([]byte, int, error) {
	id := r.PathValue("record_id")
	req := bleve.NewSearchRequestOptions(bleve.NewDocIDQuery([]string{id}), 1, 0, false)
	req.Score = bleve.ScoreNone
	res, err := p.idx.SearchInContext(r.Context(), req)
	if err != nil {
		return nil, http.StatusInternalServerError, fmt.Errorf("searching: %w", err)
	}
	if len(res.Hits) == 0 {
		return nil, http.StatusNotFound, fmt.Errorf("no record %q", id)
	}
	return p.bodies[res.Hits[0].ID], 0, nil
}

// byDate is rappel's default order.
var byDate = []string{"-event_date", "record_id"}

func (p *blevePeer) search(r *http.Request) ([]byte, int, error) {
	s, err := peerSearchOf(r)
	if err != nil {
		return nil, http.StatusBadRequest, err
	}
	req := bleve.NewSearchRequestOptions(bleveQuery(s), s.Limit+1, 0, false)
	req.SortBy(byDate)
	req.Score = bleve.ScoreNone
	if s.AfterID != "" {
		req.SetSearchAfter([]string{s.AfterDate, s.AfterID})
	}
	res, err := p.idx.SearchInContext(r.Context(), req)
	if err != nil {
		return nil, http.StatusInternalServerError, fmt.Errorf("searching: %w", err)
	}
	var bodies [][]byte
	next := ""
	for i, h := range res.Hits {
		if i == s.Limit {
			last := p.recs[res.Hits[i-1].ID]
			next = encodeCursor(last.EventDate, last.RecordID)
			break
		}
		bodies = append(bodies, p.bodies[h.ID])
	}
	return appendPage(make([]byte, 0, 256<<10), int(res.Total), bodies, next), 0, nil
}

// bleveQuery translates a search: each term is a phrase match (one word
// is a term match) in either language's field; clauses, filters and the
// date range are AND-ed; exclusions are must-nots.
func bleveQuery(s *peerSearch) query.Query {
	var must []query.Query
	var mustNot []query.Query
	if s.Query != nil {
		for _, c := range s.Query.Clauses {
			var alts []query.Query
			for _, t := range c.Terms {
				for _, f := range []string{"text_en", "text_fr"} {
					q := bleve.NewMatchPhraseQuery(t.Text)
					q.SetField(f)
					alts = append(alts, q)
				}
			}
			if c.Exclude {
				mustNot = append(mustNot, bleve.NewDisjunctionQuery(alts...))
			} else {
				must = append(must, bleve.NewDisjunctionQuery(alts...))
			}
		}
	}
	for _, f := range []struct{ field, v string }{{"recall_type", s.RecallType}, {"agency", s.Agency}, {"hazard_class", s.HazardClass}} {
		if f.v != "" {
			q := bleve.NewTermQuery(f.v)
			q.SetField(f.field)
			must = append(must, q)
		}
	}
	if s.IssuedAfter != "" || s.IssuedBefore != "" {
		yes := true
		q := bleve.NewTermRangeInclusiveQuery(s.IssuedAfter, s.IssuedBefore, &yes, &yes)
		q.SetField("event_date")
		must = append(must, q)
	}
	if len(must) == 0 {
		must = append(must, bleve.NewMatchAllQuery())
	}
	if len(mustNot) == 0 && len(must) == 1 {
		return must[0]
	}
	b := bleve.NewBooleanQuery()
	b.AddMust(must...)
	b.AddMustNot(mustNot...)
	return b
}

func (p *blevePeer) stats(r *http.Request) ([]byte, int, error) {
	if err := checkStats(r); err != nil {
		return nil, http.StatusBadRequest, err
	}
	req := bleve.NewSearchRequestOptions(bleve.NewMatchAllQuery(), 1, 0, false)
	req.SortBy([]string{"event_date", "record_id"}) // the oldest record
	req.Score = bleve.ScoreNone
	req.AddFacet("t", bleve.NewFacetRequest("recall_type", 50))
	res, err := p.idx.SearchInContext(r.Context(), req)
	if err != nil {
		return nil, http.StatusInternalServerError, fmt.Errorf("searching: %w", err)
	}
	out := statsBody{EntityType: "recall", TotalInDB: int(res.Total), Total: int(res.Total), ByType: []statsGroup{}}
	if f := res.Facets["t"]; f != nil && f.Terms != nil {
		for _, t := range f.Terms.Terms() {
			out.ByType = append(out.ByType, statsGroup{Value: t.Term, Count: t.Count})
		}
	}
	if len(res.Hits) > 0 {
		out.IssuedAfter = p.recs[res.Hits[0].ID].EventDate
		out.PeriodDays = periodDays(out.IssuedAfter, p.now())
	}
	b, err := json.Marshal(out)
	return b, http.StatusInternalServerError, err
}

// lookup returns the records whose field holds key, newest first.
func (p *blevePeer) lookup(ctx context.Context, field, key string, vehicleOnly bool, match string) ([]lookupResult, error) {
	tq := bleve.NewTermQuery(key)
	tq.SetField(field)
	var q query.Query = tq
	if vehicleOnly {
		vq := bleve.NewTermQuery(rappel.TypeVehicle)
		vq.SetField("recall_type")
		q = bleve.NewConjunctionQuery(tq, vq)
	}
	req := bleve.NewSearchRequestOptions(q, 1000, 0, false)
	req.SortBy(byDate)
	req.Score = bleve.ScoreNone
	res, err := p.idx.SearchInContext(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("searching: %w", err)
	}
	out := []lookupResult{}
	for _, h := range res.Hits {
		rec := p.recs[h.ID]
		out = append(out, lookupResult{RecallID: rec.RecallID, RecordID: rec.RecordID, RecallType: rec.RecallType, TitleEN: titleEN(rec), Match: match})
	}
	return out, nil
}

func (p *blevePeer) upc(r *http.Request) ([]byte, int, error) {
	return upcAnswer(r, func(ctx context.Context, gtin string) ([]lookupResult, error) {
		return p.lookup(ctx, "gtin", gtin, false, "")
	})
}

func (p *blevePeer) vin(r *http.Request) ([]byte, int, error) {
	return vinAnswer(r, func(ctx context.Context, key, match string) ([]lookupResult, error) {
		return p.lookup(ctx, "vkey", key, true, match)
	})
}
