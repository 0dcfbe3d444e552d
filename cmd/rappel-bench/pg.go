package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
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
	load := func(recs []*rappel.Record, bodies map[string][]byte) error {
		return loadPG(ctx, pool, recs, bodies, log)
	}
	return loadAndServe(ctx, *addr, log, load, newPGPeer(pool))
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

// newPGPeer answers the query set from PostgreSQL.
func newPGPeer(pool *pgxpool.Pool) *sqlPeer {
	return &sqlPeer{db: pgQuerier{pool}, where: pgWhere, now: time.Now}
}

// pgWhere translates a search into conditions. Each query term is matched
// as a phrase of its words (phraseto_tsquery, which for one word is that
// word) in either language, as rappel matches each term in either stream.
func pgWhere(s *peerSearch) ([]string, sqlArgs) {
	var conds []string
	var args sqlArgs
	if s.Query != nil && len(s.Query.Clauses) > 0 {
		var clauses []string
		for _, c := range s.Query.Clauses {
			var terms []string
			for _, t := range c.Terms {
				a := args.add(t.Text)
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
	return filterConds(conds, s, &args), args
}

// pgQuerier runs the SQL peers' shared statements on a pgx pool.
type pgQuerier struct{ pool *pgxpool.Pool }

func (q pgQuerier) query(ctx context.Context, sql string, args ...any) (sqlRows, func(), error) {
	rows, err := q.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, nil, err
	}
	return rows, rows.Close, nil
}

// pageAndCount runs the page and the exact count in one round trip (a
// batch).
func (q pgQuerier) pageAndCount(ctx context.Context, limit int, page string, pageArgs sqlArgs, count string, args sqlArgs) ([][]byte, string, int, error) {
	var b pgx.Batch
	b.Queue(page, pageArgs...)
	b.Queue(count, args...)
	res := q.pool.SendBatch(ctx, &b)
	defer res.Close()
	rows, err := res.Query()
	return readPageAndCount(limit, rows, func() { rows.Close() }, err, func() sqlRow { return res.QueryRow() })
}

func (q pgQuerier) queryRow(ctx context.Context, sql string, args ...any) sqlRow {
	return q.pool.QueryRow(ctx, sql, args...)
}
