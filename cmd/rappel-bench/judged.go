package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/bundle"
	"github.com/rappel-ca/rappel/edge"
	"github.com/rappel-ca/rappel/internal/judged"
	"github.com/rappel-ca/rappel/kv/index"
	"github.com/rappel-ca/rappel/kv/postgres/pgtest"
)

// runJudged is `rappel-bench judged [-set FILE] [-systems LIST]`: it scores
// the judged query set (testdata/judged) on rappel and on what a user
// would reach for to tolerate typos, and prints recall@10 and MRR by kind
// as a markdown table:
//
//   - rappel: GET /recall through the real router over the bundle's
//     segment, sort_by=relevance, with each query's parameters (a 422 is a
//     miss);
//   - bleve: the records indexed as the bleve peer indexes them (English
//     and French stems, accents folded), each word a fuzzy match query
//     (edit distance 0 up to 4 letters, 1 up to 8, 2 beyond, Bleve's
//     maximum), a word* or the last word under prefix=last a prefix query,
//     words AND-ed, ranked by Bleve's score;
//   - postgres: each record's text, lower case and unaccented, in a column
//     under a pg_trgm GIN index; each word must match by trigram word
//     similarity (`<%`, at pg_trgm's default threshold, 0.6), a prefix as
//     the start of a word, ranked by the sum of the words' similarities;
//   - postgres-0.4: the same with the threshold lowered to 0.4, as one
//     tunes it for typos (at 0.6, one letter dropped from a 6-letter word
//     is too far: "cocnut" is 0.5 from "coconut").
//
// The peers are given the set's prefix semantics; pg_trgm has no
// stemming, and neither peer has synonyms.
func runJudged(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("rappel-bench judged", flag.ContinueOnError)
	fs.SetOutput(stderr)
	set := fs.String("set", "../../testdata/judged/queries.tsv", "judged query set `file`")
	systems := fs.String("systems", "rappel,bleve,postgres,postgres-0.4", "comma-separated `systems` to score")
	if err := fs.Parse(args); err != nil {
		return err
	}
	f, err := os.Open(*set)
	if err != nil {
		return err
	}
	qs, err := judged.Read(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("reading %s: %w", *set, err)
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	recs, _, err := bundleRecords()
	if err != nil {
		return err
	}
	judges := map[string]func(context.Context, []*rappel.Record, []judged.Query) ([]judged.Outcome, error){
		"rappel": judgeRappel, "bleve": judgeBleve,
		"postgres": pgAt(""), "postgres-0.4": pgAt("0.4"),
	}
	var names []string
	var scores []map[string]judged.Score
	for _, name := range strings.Split(*systems, ",") {
		judge, ok := judges[name]
		if !ok {
			return fmt.Errorf("unknown system %q: use rappel, bleve, postgres or postgres-0.4", name)
		}
		start := time.Now()
		outs, err := judge(ctx, recs, qs)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		log.Info("scored the judged set", "system", name, "queries", len(qs), "took", time.Since(start).Round(time.Millisecond))
		names = append(names, name)
		scores = append(scores, judged.Scores(qs, outs))
	}
	judged.Table(stdout, names, scores)
	return nil
}

// judgeRappel sends the set through rappel's router over the bundle's
// segment, as a node serves it.
func judgeRappel(_ context.Context, _ []*rappel.Record, qs []judged.Query) ([]judged.Outcome, error) {
	b, _, err := bundle.IndexSegment()
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, fmt.Errorf("the embedded bundle has no read index; rebuild it with `make bundle`")
	}
	seg, err := index.OpenSegmentBytes("bundle", b, index.Options{})
	if err != nil {
		return nil, err
	}
	catalog := &index.Catalog{}
	catalog.Swap(seg)
	s := edge.NewServer()
	s.Catalog = catalog
	s.Keys = edge.NewStaticKeys([]string{"judged"})
	s.Logger = slog.New(slog.DiscardHandler)
	return judged.Serve(s.Handler(), qs, func(r *http.Request) { r.Header.Set("X-Gateway-Key", "judged") })
}

// fuzziness is the edit distance a word of n letters may be off by.
func fuzziness(word string) int {
	switch n := utf8.RuneCountInString(word); {
	case n <= 4:
		return 0
	case n <= 8:
		return 1
	}
	return 2
}

// judgedWord is one term of a judged query, as the peers read it.
type judgedWord struct {
	text   string
	phrase bool
	prefix bool
}

// judgedClauses reads q's text in the q language into clauses of terms
// (OR within a clause, AND across), marking prefixes: a word ending in *,
// or the last word under prefix=last. Exclusions are left out: the set
// has none.
func judgedClauses(q judged.Query) ([][]judgedWord, error) {
	parsed, err := rappel.ParseQuery(q.Q)
	if err != nil || parsed == nil {
		return nil, fmt.Errorf("q %q: %v", q.Q, err)
	}
	var out [][]judgedWord
	for ci, c := range parsed.Clauses {
		if c.Exclude {
			continue
		}
		var ws []judgedWord
		for ti, t := range c.Terms {
			w := judgedWord{text: strings.TrimSuffix(t.Text, "*"), phrase: t.Phrase}
			last := ci == len(parsed.Clauses)-1 && ti == len(c.Terms)-1
			w.prefix = !t.Phrase && (t.Prefix || strings.HasSuffix(t.Text, "*") || last && q.Params.Get("prefix") == "last")
			ws = append(ws, w)
		}
		out = append(out, ws)
	}
	return out, nil
}

// judgedFold is an analyzer that only lower-cases and folds accents, for
// prefixes, which Bleve does not analyse.
const judgedFold = "judged_fold"

// judgeBleve indexes recs in memory as the bleve peer does and runs each
// query as fuzzy match queries.
func judgeBleve(ctx context.Context, recs []*rappel.Record, qs []judged.Query) ([]judged.Outcome, error) {
	idx, err := judgedBleveIndex(recs)
	if err != nil {
		return nil, err
	}
	defer idx.Close()
	outs := make([]judged.Outcome, len(qs))
	for i, q := range qs {
		bq, err := bleveFuzzyQuery(idx, q)
		if err != nil {
			outs[i].Rejected = true
			continue
		}
		res, err := idx.SearchInContext(ctx, bleve.NewSearchRequestOptions(bq, judged.K, 0, false))
		if err != nil {
			return nil, fmt.Errorf("searching %q: %w", q.Q, err)
		}
		for _, h := range res.Hits {
			outs[i].IDs = append(outs[i].IDs, h.ID)
		}
	}
	return outs, nil
}

// judgedBleveIndex is an in-memory index of recs under the bleve peer's
// mapping, plus judgedFold.
func judgedBleveIndex(recs []*rappel.Record) (bleve.Index, error) {
	m, err := bleveMapping()
	if err != nil {
		return nil, err
	}
	im, ok := m.(*mapping.IndexMappingImpl)
	if !ok {
		return nil, fmt.Errorf("bleve mapping is a %T", m)
	}
	if err := im.AddCustomAnalyzer(judgedFold, map[string]any{
		"type": "custom", "char_filters": []string{"asciifolding"}, "tokenizer": "unicode", "token_filters": []string{"to_lower"},
	}); err != nil {
		return nil, err
	}
	idx, err := bleve.NewMemOnly(im)
	if err != nil {
		return nil, err
	}
	b := idx.NewBatch()
	for i, r := range recs {
		if err := b.Index(r.RecordID, bleveDoc(r)); err != nil {
			return nil, err
		}
		if b.Size() == 1000 || i == len(recs)-1 {
			if err := idx.Batch(b); err != nil {
				return nil, err
			}
			b.Reset()
		}
	}
	return idx, nil
}

// bleveFuzzyQuery translates q: each word a fuzzy match query in either
// language's field (a phrase a phrase query, a prefix a prefix query of
// its folded tokens), words AND-ed.
func bleveFuzzyQuery(idx bleve.Index, q judged.Query) (query.Query, error) {
	clauses, err := judgedClauses(q)
	if err != nil {
		return nil, err
	}
	fold := idx.Mapping().AnalyzerNamed(judgedFold)
	var must []query.Query
	for _, c := range clauses {
		var alts []query.Query
		for _, w := range c {
			for _, field := range []string{"text_en", "text_fr"} {
				switch {
				case w.phrase:
					pq := bleve.NewMatchPhraseQuery(w.text)
					pq.SetField(field)
					alts = append(alts, pq)
				case w.prefix:
					var parts []query.Query
					for _, tok := range fold.Analyze([]byte(w.text)) {
						pq := bleve.NewPrefixQuery(string(tok.Term))
						pq.SetField(field)
						parts = append(parts, pq)
					}
					alts = append(alts, bleve.NewConjunctionQuery(parts...))
				default:
					mq := bleve.NewMatchQuery(w.text)
					mq.SetField(field)
					mq.SetFuzziness(fuzziness(w.text))
					mq.SetOperator(query.MatchQueryOperatorAnd)
					alts = append(alts, mq)
				}
			}
		}
		must = append(must, bleve.NewDisjunctionQuery(alts...))
	}
	return bleve.NewConjunctionQuery(must...), nil
}

// judgedPGSchema is a trigram search as PostgreSQL's documentation has
// it: the text folded once at load, a GIN index of its trigrams.
var judgedPGSchema = []string{
	`CREATE EXTENSION IF NOT EXISTS pg_trgm`,
	`CREATE EXTENSION IF NOT EXISTS unaccent`,
	`CREATE TABLE docs (record_id text PRIMARY KEY, txt text NOT NULL)`,
}

var judgedPGIndexes = []string{
	`UPDATE docs SET txt = lower(unaccent(txt))`,
	`CREATE INDEX docs_trgm ON docs USING gin (txt gin_trgm_ops)`,
	`VACUUM ANALYZE docs`,
}

// pgAt is judgePG at threshold.
func pgAt(threshold string) func(context.Context, []*rappel.Record, []judged.Query) ([]judged.Outcome, error) {
	return func(ctx context.Context, recs []*rappel.Record, qs []judged.Query) ([]judged.Outcome, error) {
		return judgePG(ctx, recs, qs, threshold)
	}
}

// judgePG starts a throwaway PostgreSQL, loads recs' text and runs each
// query as a pg_trgm search, at pg_trgm's word similarity threshold or at
// threshold when it is not "".
func judgePG(ctx context.Context, recs []*rappel.Record, qs []judged.Query, threshold string) ([]judged.Outcome, error) {
	cl, err := pgtest.Start(pgtest.Options{Settings: pgSettings})
	if err != nil {
		return nil, fmt.Errorf("starting postgres (install Debian's postgresql and postgresql-contrib): %w", err)
	}
	defer cl.Stop()
	if err := cl.CreateDatabase("judged"); err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(cl.URL("judged"))
	if err != nil {
		return nil, err
	}
	if threshold != "" {
		cfg.ConnConfig.RuntimeParams["pg_trgm.word_similarity_threshold"] = threshold
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	if err := loadTrigrams(ctx, pool, recs); err != nil {
		return nil, err
	}
	outs := make([]judged.Outcome, len(qs))
	for i, q := range qs {
		sql, args, err := trigramQuery(q)
		if err != nil {
			outs[i].Rejected = true
			continue
		}
		rows, err := pool.Query(ctx, sql, args...)
		if err != nil {
			return nil, fmt.Errorf("searching %q: %w", q.Q, err)
		}
		outs[i].IDs, err = pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return nil, fmt.Errorf("searching %q: %w", q.Q, err)
		}
	}
	return outs, nil
}

// loadTrigrams loads each record's English and French text.
func loadTrigrams(ctx context.Context, pool *pgxpool.Pool, recs []*rappel.Record) error {
	for _, stmt := range judgedPGSchema {
		if _, err := pool.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("creating schema (%.40s): %w", stmt, err)
		}
	}
	var rows [][]any
	for _, r := range recs {
		en, fr := docText(r)
		rows = append(rows, []any{r.RecordID, en + "\n" + fr})
	}
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"docs"}, []string{"record_id", "txt"}, pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("copying into docs: %w", err)
	}
	for _, stmt := range judgedPGIndexes {
		if _, err := pool.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("indexing (%.40s): %w", stmt, err)
		}
	}
	return nil
}

// wordChars keeps what a regular expression for a word's start may hold.
var wordChars = regexp.MustCompile(`[^\pL\pN]+`)

// trigramQuery translates q: each word (or phrase) must be in the text by
// trigram word similarity, a prefix must start a word; a clause's words
// are OR-ed, clauses AND-ed; the rank is the sum of the similarities.
func trigramQuery(q judged.Query) (string, []any, error) {
	clauses, err := judgedClauses(q)
	if err != nil {
		return "", nil, err
	}
	var conds, scores []string
	var args []any
	for _, c := range clauses {
		var alts []string
		for _, w := range c {
			if w.prefix {
				args = append(args, wordChars.ReplaceAllString(w.text, " "))
				p := fmt.Sprintf(`('\m' || regexp_replace(lower(unaccent($%d)), ' ', '\W+', 'g'))`, len(args))
				alts = append(alts, "txt ~ "+p)
				scores = append(scores, fmt.Sprintf("(txt ~ %s)::int", p))
				continue
			}
			args = append(args, w.text)
			a := fmt.Sprintf("lower(unaccent($%d))", len(args))
			alts = append(alts, a+" <% txt")
			scores = append(scores, fmt.Sprintf("word_similarity(%s, txt)", a))
		}
		conds = append(conds, "("+strings.Join(alts, " OR ")+")")
	}
	sql := fmt.Sprintf("SELECT record_id FROM docs WHERE %s ORDER BY %s DESC, record_id LIMIT %d",
		strings.Join(conds, " AND "), strings.Join(slices.Compact(scores), " + "), judged.K)
	return sql, args, nil
}
