package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"

	"github.com/rappel-ca/rappel"
)

// sqliteSchema is what an integrator embedding SQLite would build for this
// API: the filter and sort columns in a narrow table; the record's JSON,
// served as stored, in a table of its own keyed by the same rowid, so that
// the rows a search sorts and counts are a few dozen bytes, not the
// kilobytes of a body (a word matching most records then reads a few
// megabytes of rows, not the whole file); and one FTS5 table per language,
// keyed by the record's rowid and holding no copy of the text
// (contentless), with the language-neutral text in both as rappel's
// streams hold it.
//
// FTS5's tokenizer is per table, not per column, so each language has its
// table. Both fold case and accents (unicode61 remove_diacritics 2).
// English is stemmed by FTS5's porter stemmer. FTS5 ships no stemmer for
// French, and porter's English rules would mangle French words, so French
// is matched unstemmed: "fromage" does not find "fromages", which rappel,
// PostgreSQL and Bleve all find. A French stemmer would be a custom
// tokenizer written in C against FTS5's tokenizer API, which the pure-Go
// driver does not offer; French word queries can therefore match fewer
// records here, and the report's counts show it.
var sqliteSchema = []string{
	`CREATE TABLE records (
		id INTEGER PRIMARY KEY, record_id TEXT NOT NULL UNIQUE, recall_id TEXT NOT NULL,
		recall_type TEXT NOT NULL, agency TEXT NOT NULL, hazard_class TEXT, event_date TEXT NOT NULL,
		title_en TEXT NOT NULL)`,
	`CREATE TABLE bodies (id INTEGER PRIMARY KEY REFERENCES records, body BLOB NOT NULL)`,
	`CREATE VIRTUAL TABLE text_en USING fts5(en, content='', tokenize='porter unicode61 remove_diacritics 2')`,
	`CREATE VIRTUAL TABLE text_fr USING fts5(fr, content='', tokenize='unicode61 remove_diacritics 2')`,
	`CREATE TABLE upcs (gtin TEXT NOT NULL, record_id TEXT NOT NULL REFERENCES records (record_id))`,
	`CREATE TABLE vehicles (vkey TEXT NOT NULL, record_id TEXT NOT NULL REFERENCES records (record_id))`,
}

// sqliteIndexes are built after the load, as for PostgreSQL: the B-tree
// indexes of the default order (event_date descending, record_id
// ascending; SQLite compares text bytewise, as Go and rappel do) and of
// each filter followed by it, the lookup keys, the FTS5 indexes merged into
// one b-tree each, and the planner's statistics.
var sqliteIndexes = []string{
	`CREATE INDEX records_date ON records (event_date DESC, record_id)`,
	`CREATE INDEX records_type_date ON records (recall_type, event_date DESC, record_id)`,
	`CREATE INDEX records_agency_date ON records (agency, event_date DESC, record_id)`,
	`CREATE INDEX records_hazard ON records (hazard_class)`,
	`CREATE INDEX upcs_gtin ON upcs (gtin)`,
	`CREATE INDEX vehicles_vkey ON vehicles (vkey)`,
	`INSERT INTO text_en (text_en) VALUES ('optimize')`,
	`INSERT INTO text_fr (text_fr) VALUES ('optimize')`,
	`ANALYZE`,
}

// sqliteDSN is the database file's DSN for the driver: write-ahead logging
// (readers never wait on a writer), a busy timeout rather than an immediate
// SQLITE_BUSY, and a page cache of 16 MiB a connection. The file is read,
// not memory-mapped: each connection maps the file on its own, and the
// resident set would count the same pages once a connection (four times
// over with four); read, the pages beyond the connections' caches stay in
// the kernel's page cache, as PostgreSQL's beyond its shared buffers do.
func sqliteDSN(file string) string {
	v := url.Values{"_pragma": {"journal_mode(WAL)", "busy_timeout(5000)", "synchronous(NORMAL)", "cache_size(-16384)"}}
	return "file:" + file + "?" + v.Encode()
}

// runSQLite is `rappel-bench sqlite -db FILE -addr HOST:PORT`: it loads
// the embedded bundle's records into FILE unless they are there, then
// serves.
func runSQLite(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("rappel-bench sqlite", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("db", "", "database `file`; loaded when it holds no records table")
	addr := fs.String("addr", "127.0.0.1:0", "`host:port` to listen on")
	conns := fs.Int("conns", 4, "open `connections` (each answers one query at a time)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *file == "" {
		return errors.New("no -db file given")
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	db, err := openSQLite(*file, *conns)
	if err != nil {
		return err
	}
	defer db.Close()
	load := func(recs []*rappel.Record, bodies map[string][]byte) error {
		return loadSQLite(ctx, db, recs, bodies, log)
	}
	return loadAndServe(ctx, *addr, log, load, newSQLitePeer(db))
}

// openSQLite opens the database in file with conns connections.
func openSQLite(file string, conns int) (*sql.DB, error) {
	db, err := sql.Open("sqlite", sqliteDSN(file))
	if err != nil {
		return nil, fmt.Errorf("opening sqlite: %w", err)
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	return db, nil
}

// loadSQLite creates the schema and loads recs, whose JSON is in bodies, in
// one transaction, unless a records table is there.
func loadSQLite(ctx context.Context, db *sql.DB, recs []*rappel.Record, bodies map[string][]byte, log *slog.Logger) (err error) {
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name = 'records'`).Scan(&n); err != nil {
		return fmt.Errorf("checking schema: %w", err)
	}
	if n > 0 {
		return nil
	}
	start := time.Now()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("beginning load: %w", err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	for _, stmt := range sqliteSchema {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("creating schema (%.40s): %w", stmt, err)
		}
	}
	var stmts [6]*sql.Stmt
	for i, q := range []string{
		`INSERT INTO records (id, record_id, recall_id, recall_type, agency, hazard_class, event_date, title_en) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		`INSERT INTO bodies (id, body) VALUES ($1, $2)`,
		`INSERT INTO text_en (rowid, en) VALUES ($1, $2)`,
		`INSERT INTO text_fr (rowid, fr) VALUES ($1, $2)`,
		`INSERT INTO upcs (gtin, record_id) VALUES ($1, $2)`,
		`INSERT INTO vehicles (vkey, record_id) VALUES ($1, $2)`,
	} {
		if stmts[i], err = tx.PrepareContext(ctx, q); err != nil {
			return fmt.Errorf("preparing load (%.40s): %w", q, err)
		}
		defer stmts[i].Close()
	}
	for i, r := range recs {
		id := i + 1
		en, fr := docText(r)
		var hz any
		if r.HazardClass != "" {
			hz = r.HazardClass
		}
		if _, err := stmts[0].ExecContext(ctx, id, r.RecordID, r.RecallID, r.RecallType, r.Agency, hz, r.EventDate, titleEN(r)); err != nil {
			return fmt.Errorf("loading %s: %w", r.RecordID, err)
		}
		if _, err := stmts[1].ExecContext(ctx, id, bodies[r.RecordID]); err != nil {
			return fmt.Errorf("loading %s: %w", r.RecordID, err)
		}
		if _, err := stmts[2].ExecContext(ctx, id, en); err != nil {
			return fmt.Errorf("indexing %s: %w", r.RecordID, err)
		}
		if _, err := stmts[3].ExecContext(ctx, id, fr); err != nil {
			return fmt.Errorf("indexing %s: %w", r.RecordID, err)
		}
		for _, g := range uniq(gtins(r)) {
			if _, err := stmts[4].ExecContext(ctx, g, r.RecordID); err != nil {
				return fmt.Errorf("loading the barcodes of %s: %w", r.RecordID, err)
			}
		}
		for _, k := range uniq(vehicleKeys(r)) {
			if _, err := stmts[5].ExecContext(ctx, k, r.RecordID); err != nil {
				return fmt.Errorf("loading the vehicles of %s: %w", r.RecordID, err)
			}
		}
	}
	for _, stmt := range sqliteIndexes {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("indexing (%.40s): %w", stmt, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("committing load: %w", err)
	}
	log.Info("loaded records into sqlite", "records", len(recs), "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// newSQLitePeer answers the query set from a SQLite database.
func newSQLitePeer(db *sql.DB) *sqlPeer {
	return &sqlPeer{db: sqliteQuerier{db}, where: sqliteWhere, bodiesApart: true, now: time.Now}
}

// sqliteWhere translates a search into conditions. Each clause is the set
// of records either language's FTS5 table matches with any of its terms,
// each term a quoted FTS5 phrase (which for one word is that word, and for
// a word the tokenizer splits, such as "F-150", the phrase of its parts);
// clauses are AND-ed as sets, so that one clause may match in English and
// another in French, as rappel matches each term in either stream.
func sqliteWhere(s *peerSearch) ([]string, sqlArgs) {
	var conds []string
	var args sqlArgs
	if s.Query != nil {
		for _, c := range s.Query.Clauses {
			m := args.add(fts5Match(c.Terms))
			in := "id IN"
			if c.Exclude {
				in = "id NOT IN"
			}
			conds = append(conds, fmt.Sprintf("%s (SELECT rowid FROM text_en WHERE text_en MATCH %s UNION SELECT rowid FROM text_fr WHERE text_fr MATCH %s)", in, m, m))
		}
	}
	return filterConds(conds, s, &args), args
}

// fts5Match is the FTS5 query of any of terms: each a string (double
// quotes doubled inside it), so that FTS5 reads no operator or column
// filter in what the user wrote, only the words its tokenizer finds.
func fts5Match(terms []rappel.Term) string {
	var alts []string
	for _, t := range terms {
		alts = append(alts, `"`+strings.ReplaceAll(t.Text, `"`, `""`)+`"`)
	}
	return strings.Join(alts, " OR ")
}

// sqliteQuerier runs the SQL peers' shared statements on a database/sql
// pool.
type sqliteQuerier struct{ db *sql.DB }

func (q sqliteQuerier) query(ctx context.Context, query string, args ...any) (sqlRows, func(), error) {
	rows, err := q.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, nil, err
	}
	return rows, func() { rows.Close() }, nil
}

// pageAndCount runs the page and the exact count in one read transaction,
// so that both see the same snapshot.
func (q sqliteQuerier) pageAndCount(ctx context.Context, limit int, page string, pageArgs sqlArgs, count string, args sqlArgs) ([][]byte, string, int, error) {
	tx, err := q.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, "", 0, fmt.Errorf("beginning search: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, page, pageArgs...)
	done := func() {
		if rows != nil {
			rows.Close()
		}
	}
	return readPageAndCount(limit, rows, done, err, func() sqlRow { return tx.QueryRowContext(ctx, count, args...) })
}

func (q sqliteQuerier) queryRow(ctx context.Context, query string, args ...any) sqlRow {
	return q.db.QueryRowContext(ctx, query, args...)
}
