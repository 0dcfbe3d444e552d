package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rappel-ca/rappel"
)

// pgSchema is what a user would build in PostgreSQL for this API: the
// record's JSON as text (served as is), the filter and sort columns with
// B-tree indexes matching the default order (event_date descending,
// record_id ascending), a tsvector of the English text under an English
// configuration and the French text under a French one, both folding
// accents with unaccent, under a GIN index, and the barcode and vehicle
// keys in their own indexed tables. The database is initialised with the C
// locale, so text sorts bytewise as Go (and rappel) sort it.
var pgSchema = []string{
	`CREATE EXTENSION IF NOT EXISTS unaccent`,
	`CREATE TEXT SEARCH CONFIGURATION rappel_en (COPY = english)`,
	`ALTER TEXT SEARCH CONFIGURATION rappel_en ALTER MAPPING FOR hword, hword_part, word WITH unaccent, english_stem`,
	`CREATE TEXT SEARCH CONFIGURATION rappel_fr (COPY = french)`,
	`ALTER TEXT SEARCH CONFIGURATION rappel_fr ALTER MAPPING FOR hword, hword_part, word WITH unaccent, french_stem`,
	`CREATE TABLE records (
		record_id text PRIMARY KEY, recall_id text NOT NULL, recall_type text NOT NULL,
		agency text NOT NULL, hazard_class text, event_date text NOT NULL, title_en text NOT NULL,
		body text NOT NULL, en text NOT NULL, fr text NOT NULL, tsv tsvector)`,
	`CREATE TABLE upcs (gtin text NOT NULL, record_id text NOT NULL REFERENCES records)`,
	`CREATE TABLE vehicles (vkey text NOT NULL, record_id text NOT NULL REFERENCES records)`,
}

// pgSettings are the server's settings beyond pgtest's (which turn fsync
// off: the data are throwaway, and reads do not depend on it): Debian's
// defaults but for a larger shared_buffers (the whole data set fits), no
// JIT (it slows short queries) and no parallel workers (the server has one
// core).
var pgSettings = []string{"shared_buffers=512MB", "work_mem=32MB", "jit=off", "max_parallel_workers_per_gather=0"}

// pgIndexes are built after the load, as one would for a bulk load.
var pgIndexes = []string{
	`UPDATE records SET tsv = to_tsvector('rappel_en', en) || to_tsvector('rappel_fr', fr)`,
	`CREATE INDEX records_tsv ON records USING gin (tsv)`,
	`CREATE INDEX records_date ON records (event_date DESC, record_id)`,
	`CREATE INDEX records_type_date ON records (recall_type, event_date DESC, record_id)`,
	`CREATE INDEX records_agency_date ON records (agency, event_date DESC, record_id)`,
	`CREATE INDEX records_hazard ON records (hazard_class)`,
	`CREATE INDEX upcs_gtin ON upcs (gtin)`,
	`CREATE INDEX vehicles_vkey ON vehicles (vkey)`,
	`VACUUM ANALYZE`,
}

// runPG is `rappel-bench pg -dsn URL -addr HOST:PORT`: it loads the
// embedded bundle's records into an empty database, then serves.
func runPG(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("rappel-bench pg", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dsn := fs.String("dsn", "", "PostgreSQL connection `URL`")
	addr := fs.String("addr", "127.0.0.1:0", "`host:port` to listen on")
	conns := fs.Int("conns", 8, "connection pool `size`")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	cfg, err := pgxpool.ParseConfig(*dsn)
	if err != nil {
		return fmt.Errorf("parsing dsn: %w", err)
	}
	cfg.MaxConns = int32(*conns)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connecting to postgres: %w", err)
	}
	defer pool.Close()
	recs, bodies, err := bundleRecords()
	if err != nil {
		return err
	}
	if err := loadPG(ctx, pool, recs, bodies, log); err != nil {
		return err
	}
	p := &pgPeer{pool: pool, now: time.Now}
	return serveHTTP(ctx, *addr, p.routes(), log)
}

// loadPG creates the schema and loads recs, whose JSON is in bodies,
// unless a records table is there.
func loadPG(ctx context.Context, pool *pgxpool.Pool, recs []*rappel.Record, bodies map[string][]byte, log *slog.Logger) error {
	var exists bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass('records') IS NOT NULL`).Scan(&exists); err != nil {
		return fmt.Errorf("checking schema: %w", err)
	}
	if exists {
		return nil
	}
	start := time.Now()
	for _, stmt := range pgSchema {
		if _, err := pool.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("creating schema (%.40s): %w", stmt, err)
		}
	}
	var rows, upcRows, vehRows [][]any
	for _, r := range recs {
		en, fr := docText(r)
		var hz any
		if r.HazardClass != "" {
			hz = r.HazardClass
		}
		rows = append(rows, []any{r.RecordID, r.RecallID, r.RecallType, r.Agency, hz, r.EventDate, titleEN(r), string(bodies[r.RecordID]), en, fr})
		for _, g := range uniq(gtins(r)) {
			upcRows = append(upcRows, []any{g, r.RecordID})
		}
		for _, k := range uniq(vehicleKeys(r)) {
			vehRows = append(vehRows, []any{k, r.RecordID})
		}
	}
	copies := []struct {
		table string
		cols  []string
		rows  [][]any
	}{
		{"records", []string{"record_id", "recall_id", "recall_type", "agency", "hazard_class", "event_date", "title_en", "body", "en", "fr"}, rows},
		{"upcs", []string{"gtin", "record_id"}, upcRows},
		{"vehicles", []string{"vkey", "record_id"}, vehRows},
	}
	for _, c := range copies {
		if _, err := pool.CopyFrom(ctx, pgx.Identifier{c.table}, c.cols, pgx.CopyFromRows(c.rows)); err != nil {
			return fmt.Errorf("copying into %s: %w", c.table, err)
		}
	}
	for _, stmt := range pgIndexes {
		if _, err := pool.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("indexing (%.40s): %w", stmt, err)
		}
	}
	log.Info("loaded records into postgres", "records", len(recs), "took", time.Since(start).Round(time.Millisecond))
	return nil
}

func uniq(ss []string) []string {
	slices.Sort(ss)
	return slices.Compact(ss)
}

// pgPeer answers the query set from PostgreSQL.
type pgPeer struct {
	pool *pgxpool.Pool
	now  func() time.Time
}

func (p *pgPeer) routes() http.Handler { return peerRoutes(p) }

func (p *pgPeer) record(r *http.Request) ([]byte, int, error) {
	var body string
	err := p.pool.QueryRow(r.Context(), `SELECT body FROM records WHERE record_id = $1`, r.PathValue("record_id")).Scan(&body)
	if err == pgx.ErrNoRows {
		return nil, http.StatusNotFound, fmt.Errorf("no record %q", r.PathValue("record_id"))
	} else if err != nil {
		return nil, http.StatusInternalServerError, fmt.Errorf("querying record: %w", err)
	}
	return []byte(body), 0, nil
}

// search runs the page and the exact count in one round trip (a batch).
func (p *pgPeer) search(r *http.Request) ([]byte, int, error) {
	s, err := peerSearchOf(r)
	if err != nil {
		return nil, http.StatusBadRequest, err
	}
	where, args := pgWhere(s)
	pageWhere, pageArgs := where, slices.Clone(args)
	if s.AfterID != "" {
		n := len(pageArgs)
		pageWhere = append(slices.Clone(where), fmt.Sprintf("(event_date < $%d OR (event_date = $%d AND record_id > $%d))", n+1, n+1, n+2))
		pageArgs = append(pageArgs, s.AfterDate, s.AfterID)
	}
	var b pgx.Batch
	b.Queue(`SELECT event_date, record_id, body FROM records`+whereSQL(pageWhere)+` ORDER BY event_date DESC, record_id LIMIT `+strconv.Itoa(s.Limit+1), pageArgs...)
	b.Queue(`SELECT count(*) FROM records`+whereSQL(where), args...)
	res := p.pool.SendBatch(r.Context(), &b)
	defer res.Close()
	rows, err := res.Query()
	if err != nil {
		return nil, http.StatusInternalServerError, fmt.Errorf("querying page: %w", err)
	}
	var bodies [][]byte
	var lastDate, lastID, next string
	for rows.Next() {
		var d, id, body string
		if err := rows.Scan(&d, &id, &body); err != nil {
			return nil, http.StatusInternalServerError, fmt.Errorf("reading page: %w", err)
		}
		if len(bodies) == s.Limit {
			next = encodeCursor(lastDate, lastID)
			break
		}
		bodies = append(bodies, []byte(body))
		lastDate, lastID = d, id
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, http.StatusInternalServerError, fmt.Errorf("reading page: %w", err)
	}
	var count int
	if err := res.QueryRow().Scan(&count); err != nil {
		return nil, http.StatusInternalServerError, fmt.Errorf("counting: %w", err)
	}
	return appendPage(make([]byte, 0, 256<<10), count, bodies, next), 0, nil
}

func whereSQL(conds []string) string {
	if len(conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(conds, " AND ")
}

// pgWhere translates a search into conditions. Each query term is matched
// as a phrase of its words (phraseto_tsquery, which for one word is that
// word) in either language, as rappel matches each term in either stream.
func pgWhere(s *peerSearch) ([]string, []any) {
	var conds []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if s.Query != nil && len(s.Query.Clauses) > 0 {
		var clauses []string
		for _, c := range s.Query.Clauses {
			var terms []string
			for _, t := range c.Terms {
				a := arg(t.Text)
				terms = append(terms, fmt.Sprintf("phraseto_tsquery('rappel_en', %s) || phraseto_tsquery('rappel_fr', %s)", a, a))
			}
			cl := "(" + strings.Join(terms, " || ") + ")"
			if c.Exclude {
				cl = "!!" + cl
			}
			clauses = append(clauses, cl)
		}
		conds = append(conds, "tsv @@ ("+strings.Join(clauses, " && ")+")")
	}
	for _, f := range []struct{ col, v string }{{"recall_type", s.RecallType}, {"agency", s.Agency}, {"hazard_class", s.HazardClass}} {
		if f.v != "" {
			conds = append(conds, f.col+" = "+arg(f.v))
		}
	}
	if s.IssuedAfter != "" {
		conds = append(conds, "event_date >= "+arg(s.IssuedAfter))
	}
	if s.IssuedBefore != "" {
		conds = append(conds, "event_date <= "+arg(s.IssuedBefore))
	}
	return conds, args
}

func (p *pgPeer) stats(r *http.Request) ([]byte, int, error) {
	if err := checkStats(r); err != nil {
		return nil, http.StatusBadRequest, err
	}
	out := statsBody{EntityType: "recall", ByType: []statsGroup{}}
	var oldest *string
	if err := p.pool.QueryRow(r.Context(), `SELECT min(event_date), count(*) FROM records`).Scan(&oldest, &out.TotalInDB); err != nil {
		return nil, http.StatusInternalServerError, fmt.Errorf("querying totals: %w", err)
	}
	rows, err := p.pool.Query(r.Context(), `SELECT recall_type, count(*) FROM records GROUP BY 1 ORDER BY 2 DESC, 1`)
	if err != nil {
		return nil, http.StatusInternalServerError, fmt.Errorf("grouping: %w", err)
	}
	for rows.Next() {
		var g statsGroup
		if err := rows.Scan(&g.Value, &g.Count); err != nil {
			return nil, http.StatusInternalServerError, fmt.Errorf("grouping: %w", err)
		}
		out.ByType = append(out.ByType, g)
		out.Total += g.Count
	}
	if err := rows.Err(); err != nil {
		return nil, http.StatusInternalServerError, fmt.Errorf("grouping: %w", err)
	}
	if oldest != nil {
		out.IssuedAfter = *oldest
		out.PeriodDays = periodDays(*oldest, p.now())
	}
	b, err := json.Marshal(out)
	return b, http.StatusInternalServerError, err
}

const pgLookupSQL = `SELECT r.recall_id, r.record_id, r.recall_type, r.title_en FROM %s k JOIN records r USING (record_id)
	WHERE k.%s = $1 %s ORDER BY r.event_date DESC, r.record_id`

func (p *pgPeer) lookup(ctx context.Context, table, col, key, extra, match string) ([]lookupResult, error) {
	rows, err := p.pool.Query(ctx, fmt.Sprintf(pgLookupSQL, table, col, extra), key)
	if err != nil {
		return nil, fmt.Errorf("looking up %s: %w", table, err)
	}
	out := []lookupResult{}
	for rows.Next() {
		l := lookupResult{Match: match}
		if err := rows.Scan(&l.RecallID, &l.RecordID, &l.RecallType, &l.TitleEN); err != nil {
			return nil, fmt.Errorf("looking up %s: %w", table, err)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

func (p *pgPeer) upc(r *http.Request) ([]byte, int, error) {
	return upcAnswer(r, func(ctx context.Context, gtin string) ([]lookupResult, error) {
		return p.lookup(ctx, "upcs", "gtin", gtin, "", "")
	})
}

func (p *pgPeer) vin(r *http.Request) ([]byte, int, error) {
	vin := r.URL.Query().Get("vin")
	full, makeYear, err := vinKeys(vin)
	if err != nil {
		return nil, http.StatusBadRequest, err
	}
	res := []lookupResult{}
	if full != "" {
		const vehicle = `AND r.recall_type = 'vehicle'`
		if res, err = p.lookup(r.Context(), "vehicles", "vkey", full, vehicle, "make_model_year"); err == nil && len(res) == 0 {
			res, err = p.lookup(r.Context(), "vehicles", "vkey", makeYear, vehicle, "make_year")
		}
		if err != nil {
			return nil, http.StatusInternalServerError, err
		}
	}
	b, err := json.Marshal(map[string]any{"vin": strings.ToUpper(vin), "results": res})
	return b, http.StatusInternalServerError, err
}
