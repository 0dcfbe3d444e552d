package realjudged_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/judged"
	"github.com/rappel-ca/rappel/kv/postgres/pgtest"
	"github.com/rappel-ca/rappel/plugins/realjudged"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// body is the text a baseline indexes for r: what Rappel's index reads of
// it, in both languages (titles, products, hazards, what to do, category,
// system, the affected makes and models).
func body(r *rappel.Record) string {
	var parts []string
	for _, tr := range []*rappel.Translation{r.Translations.EN, r.Translations.FR} {
		if tr == nil {
			continue
		}
		parts = append(parts, tr.Title, tr.ProductDescription, tr.HazardDescription, tr.WhatToDo, tr.Category, tr.System, tr.VehicleCategory)
	}
	parts = append(parts, r.Category, r.VehicleMake, r.VehicleModel)
	for _, m := range r.AffectedModels {
		parts = append(parts, m.Make, m.Model)
	}
	return strings.Join(parts, " ")
}

// words are the query's words, for the baselines' own query syntax.
var wordRE = regexp.MustCompile(`[\p{L}\p{N}]+`)

// TestBaselines_JudgedReal scores two full-text engines on the real judged
// set, over the same records Rappel serves, for BENCHMARKS.md: SQLite FTS5
// (the sqlite3 program, porter tokenizer over unicode61 without diacritics,
// ranked by bm25) with the query's words OR-ed and AND-ed, and PostgreSQL
// (to_tsvector('english'), ranked by ts_rank) with plainto_tsquery and its
// OR form. It logs the table and asserts only that the runs answered every
// query; an engine that is not installed is skipped, a failure under
// RAPPEL_CI, which installs both.
func TestBaselines_JudgedReal(t *testing.T) {
	recs := realjudged.Notices(t)
	qs := realjudged.Set(t)
	var names []string
	var scores []map[string]judged.GradedScore
	add := func(name string, outs []judged.Outcome) {
		names = append(names, name)
		scores = append(scores, judged.GradedScores(qs, outs))
	}
	if _, err := exec.LookPath("sqlite3"); err != nil {
		if os.Getenv("RAPPEL_CI") != "" {
			t.Fatalf("sqlite3 is not installed (RAPPEL_CI is set, so it must be; apt-get install sqlite3)")
		}
		t.Logf("sqlite3 is not installed, FTS5 left out; apt-get install sqlite3 to measure it")
	} else {
		for _, op := range []string{"OR", "AND"} {
			add("FTS5 "+op, fts5(t, recs, qs, op))
		}
	}
	dsn := pgtest.DSN(t)
	for _, form := range []string{"plain", "OR"} {
		add("PG "+form, postgres(t, dsn, recs, qs, form))
	}
	var b bytes.Buffer
	judged.GradedTable(&b, judged.Classes(qs), names, scores)
	t.Logf("baselines on the real judged set, %d queries:\n%s", len(qs), strings.TrimSpace(b.String()))
}

// fts5 runs every query through one sqlite3 process over an in-memory
// FTS5 table of recs, the query's words quoted and joined by op.
func fts5(t *testing.T, recs []*rappel.Record, qs []judged.Graded, op string) []judged.Outcome {
	t.Helper()
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	var sql strings.Builder
	sql.WriteString("CREATE VIRTUAL TABLE d USING fts5(id UNINDEXED, body, tokenize='porter unicode61 remove_diacritics 2');\nBEGIN;\n")
	for _, r := range recs {
		fmt.Fprintf(&sql, "INSERT INTO d VALUES(%s, %s);\n", quote(r.RecordID), quote(body(r)))
	}
	sql.WriteString("COMMIT;\n")
	for i, q := range qs {
		var terms []string
		for _, w := range wordRE.FindAllString(q.Q, -1) {
			terms = append(terms, `"`+w+`"`)
		}
		fmt.Fprintf(&sql, "SELECT '#%d';\n", i)
		if len(terms) > 0 {
			fmt.Fprintf(&sql, "SELECT id FROM d WHERE d MATCH %s ORDER BY bm25(d) LIMIT %d;\n", quote(strings.Join(terms, " "+op+" ")), judged.K)
		}
	}
	cmd := exec.Command("sqlite3", ":memory:")
	cmd.Stdin = strings.NewReader(sql.String())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("sqlite3: %v: %.500s", err, stderr.String())
	}
	outs := make([]judged.Outcome, len(qs))
	cur := -1
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if n, ok := strings.CutPrefix(line, "#"); ok {
			fmt.Sscan(n, &cur)
			continue
		}
		outs[cur].IDs = append(outs[cur].IDs, line)
	}
	return outs
}

// postgres loads recs into a table of database dsn (once) and runs every
// query: plainto_tsquery's AND of the words, or the same with | for &.
func postgres(t *testing.T, dsn string, recs []*rappel.Record, qs []judged.Graded, form string) []judged.Outcome {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS d (id text PRIMARY KEY, tsv tsvector)`)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM d`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		rows := make([][]any, len(recs))
		for i, r := range recs {
			rows[i] = []any{r.RecordID, body(r)}
		}
		if _, err := conn.Exec(ctx, `CREATE TEMP TABLE raw (id text, body text)`); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.CopyFrom(ctx, pgx.Identifier{"raw"}, []string{"id", "body"}, pgx.CopyFromRows(rows)); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, `INSERT INTO d SELECT id, to_tsvector('english', body) FROM raw; CREATE INDEX ON d USING gin (tsv)`); err != nil {
			t.Fatal(err)
		}
	}
	tsq := `plainto_tsquery('english', $1)`
	if form == "OR" {
		tsq = `replace(plainto_tsquery('english', $1)::text, '&', '|')::tsquery`
	}
	sql := fmt.Sprintf(`WITH x AS (SELECT %s AS q) SELECT id FROM d, x WHERE tsv @@ x.q ORDER BY ts_rank(tsv, x.q) DESC, id LIMIT %d`, tsq, judged.K)
	outs := make([]judged.Outcome, len(qs))
	for i, q := range qs {
		rows, err := conn.Query(ctx, sql, q.Q)
		if err != nil {
			t.Fatal(err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		var pgErr interface{ SQLState() string }
		if errors.As(err, &pgErr) {
			t.Fatalf("%q: %v", q.Q, err)
		}
		if err != nil {
			t.Fatal(err)
		}
		outs[i].IDs = ids
	}
	return outs
}
