package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rappel-ca/rappel"
)

// schemaAlerts holds subscriptions, their tokens, the alert outbox and the
// record ids already matched by some node.
//
// A subscription is kept whole as JSONB (the Subscription's JSON, as the
// Pebble store keeps it) next to the columns a query needs, so that adding
// a field to it needs no migration. Tokens are stored by SHA-256 only.
var schemaAlerts = `
CREATE TABLE IF NOT EXISTS alert_subscriptions (
	id     TEXT PRIMARY KEY,
	status TEXT NOT NULL,
	body   JSONB NOT NULL
);
CREATE TABLE IF NOT EXISTS alert_tokens (
	hash BYTEA PRIMARY KEY,
	sub  TEXT NOT NULL,
	kind TEXT NOT NULL
);` + outboxTables(alertOutbox)

// outboxTables is the SQL that creates o's tables: its rows, its index of
// due rows and, when o has one, its table of matched keys. The alerts',
// the confirmations' and the webhooks' outboxes are made from this one
// definition, as the queries below serve all three: their tables cannot
// drift apart. Rows are keyed (sub, record) like the Pebble keys, so that
// a recall (or an event) reaches a subscription (or an endpoint) once
// however many nodes match it. The partial index serves the claim's scan
// of due rows; both PostgreSQL and CockroachDB (20.2 and later) build
// partial indexes. The migrations that create these tables are released:
// this must go on writing the SQL they ran, byte for byte.
func outboxTables(o outbox) string {
	payload := ""
	if o.payload {
		payload = "\n\tpayload       BYTEA,"
	}
	sql := `
CREATE TABLE IF NOT EXISTS ` + o.rows + ` (
	sub           TEXT NOT NULL,
	record        TEXT NOT NULL,
	seq           BIGINT NOT NULL,
	status        TEXT NOT NULL,
	attempts      BIGINT NOT NULL DEFAULT 0,
	next_at       TIMESTAMPTZ NOT NULL,
	created_at    TIMESTAMPTZ NOT NULL,
	sent_at       TIMESTAMPTZ,
	error         TEXT NOT NULL DEFAULT '',
	claimed_by    TEXT NOT NULL DEFAULT '',
	claimed_until TIMESTAMPTZ,` + payload + `
	PRIMARY KEY (sub, record)
);
CREATE INDEX IF NOT EXISTS ` + o.rows + `_due ON ` + o.rows + ` (next_at) WHERE status = 'pending';
`
	if o.matched != "" {
		sql += `CREATE TABLE IF NOT EXISTS ` + o.matched + ` (
	record     TEXT PRIMARY KEY,
	node       TEXT NOT NULL,
	matched_at TIMESTAMPTZ NOT NULL
);
`
	}
	return sql
}

var _ rappel.Outbox = (*Store)(nil)

// outbox names the tables of one outbox: the alerts', the confirmation
// e-mails' and the webhooks' share the queries below and differ in their
// tables, and in the webhook rows' payload column. matched is "" for the
// confirmations, which nothing matches.
type outbox struct {
	rows, matched string
	payload       bool
	// what names the rows in errors: "alert", "webhook delivery".
	what string
}

var alertOutbox = outbox{rows: "alert_outbox", matched: "alert_matched", what: "alert"}

// sql names o's tables in q: {rows} and {matched}; {payload} is the
// payload column, or NULL in a table without one, and {,payload} adds it
// to a column list.
func (o outbox) sql(q string) string {
	payload, list := "NULL::BYTEA", ""
	if o.payload {
		payload, list = "payload", ", payload"
	}
	return strings.NewReplacer("{rows}", o.rows, "{matched}", o.matched, "{payload}", payload, "{,payload}", list).Replace(q)
}

// UnmatchedRecords returns those of ids no node has marked as matched.
func (s *Store) UnmatchedRecords(ctx context.Context, ids []string) ([]string, error) {
	return s.unmatched(ctx, alertOutbox, ids)
}

func (s *Store) unmatched(ctx context.Context, o outbox, ids []string) ([]string, error) {
	if s.pool == nil {
		return nil, errNotOpen
	}
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, o.sql(`SELECT record FROM {matched} WHERE record = ANY($1::TEXT[])`), ids)
	if err != nil {
		return nil, fmt.Errorf("reading matched recalls: %w", err)
	}
	done, err := collectSet(rows)
	if err != nil {
		return nil, fmt.Errorf("reading matched recalls: %w", err)
	}
	var out []string
	for _, id := range ids {
		if !done[id] {
			out = append(out, id)
		}
	}
	return out, nil
}

// collectSet reads rows of one text column into a set.
func collectSet(rows pgx.Rows) (map[string]bool, error) {
	set := map[string]bool{}
	var v string
	_, err := pgx.ForEachRow(rows, []any{&v}, func() error {
		set[v] = true
		return nil
	})
	return set, err
}

// CommitMatches marks records and writes the rows of those it marked, in
// one transaction. Two nodes committing the same record at once are
// ordered by its primary key: PostgreSQL holds the second INSERT until the
// first commits and then does nothing, CockroachDB makes one of the two
// transactions retry (inTx), and either way only the first node's rows are
// written.
func (s *Store) CommitMatches(ctx context.Context, records []string, rows []*rappel.AlertRow) (int, error) {
	return s.commitMatches(ctx, alertOutbox, records, rows)
}

func (s *Store) commitMatches(ctx context.Context, o outbox, records []string, rows []*rappel.AlertRow) (int, error) {
	if s.pool == nil {
		return 0, errNotOpen
	}
	// Sorted, so that two transactions marking overlapping sets take the
	// marks' locks in one order and cannot deadlock.
	records = slices.Compact(slices.Sorted(slices.Values(records)))
	if len(records) == 0 {
		return 0, nil
	}
	var n int
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		n = 0
		marked, err := tx.Query(ctx, o.sql(`INSERT INTO {matched} (record, node, matched_at)
			SELECT m.record, $2, $3 FROM unnest($1::TEXT[]) AS m(record)
			ON CONFLICT (record) DO NOTHING RETURNING record`), records, s.Node, s.now().UTC())
		if err != nil {
			return fmt.Errorf("marking recalls as matched: %w", err)
		}
		ours, err := collectSet(marked)
		if err != nil {
			return fmt.Errorf("marking recalls as matched: %w", err)
		}
		b := &pgx.Batch{}
		for _, r := range rows {
			if !ours[r.Record] {
				continue
			}
			args := []any{r.Sub, r.Record, int64(r.Seq), r.Status, r.Attempts, r.NextAt.UTC(), r.CreatedAt.UTC(), nullTime(r.SentAt), r.Error}
			values := ""
			if o.payload {
				args, values = append(args, []byte(r.Payload)), ", $10"
			}
			b.Queue(o.sql(`INSERT INTO {rows} (sub, record, seq, status, attempts, next_at, created_at, sent_at, error{,payload})
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9`+values+`) ON CONFLICT (sub, record) DO NOTHING`), args...)
		}
		if b.Len() == 0 {
			return nil
		}
		res := tx.SendBatch(ctx, b)
		for range b.Len() {
			tag, err := res.Exec()
			if err != nil {
				res.Close()
				return fmt.Errorf("writing %ss: %w", o.what, err)
			}
			n += int(tag.RowsAffected())
		}
		return res.Close()
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// alertColumns are the columns scanAlert reads, in its order.
const alertColumns = `sub, record, seq, status, attempts, next_at, created_at, sent_at, error, claimed_by, claimed_until, {payload}`

func scanAlert(row pgx.Row) (*rappel.AlertRow, error) {
	r := new(rappel.AlertRow)
	var seq, attempts int64
	var sentAt, until *time.Time
	var payload []byte
	if err := row.Scan(&r.Sub, &r.Record, &seq, &r.Status, &attempts, &r.NextAt, &r.CreatedAt, &sentAt, &r.Error, &r.ClaimedBy, &until, &payload); err != nil {
		return nil, err
	}
	if len(payload) > 0 {
		r.Payload = payload
	}
	r.Seq, r.Attempts = uint64(seq), int(attempts)
	r.NextAt, r.CreatedAt = r.NextAt.UTC(), r.CreatedAt.UTC()
	if sentAt != nil {
		r.SentAt = sentAt.UTC()
	}
	if until != nil {
		r.ClaimedUntil = until.UTC()
	}
	return r, nil
}

// ClaimAlerts claims due rows for node in one transaction. SKIP LOCKED lets
// nodes claiming at the same moment each take other rows instead of
// queueing behind one another. On PostgreSQL (READ COMMITTED) a row another
// node claimed and committed meanwhile fails the WHERE clause when re-read
// under the lock; CockroachDB (SERIALIZABLE, SKIP LOCKED from 22.2) makes
// the later of two transactions touching one row retry (inTx), and the
// retry reads the claim. Either way no row is returned to two claims.
//
// Expiry compares claimed_until with the caller's clock, not the
// database's, so that tests can move time; a fleet's clocks must agree to
// well within the lease (NTP does).
func (s *Store) ClaimAlerts(ctx context.Context, node string, now time.Time, lease time.Duration, limit int) ([]*rappel.AlertRow, error) {
	return s.claim(ctx, alertOutbox, node, now, lease, limit)
}

func (s *Store) claim(ctx context.Context, o outbox, node string, now time.Time, lease time.Duration, limit int) ([]*rappel.AlertRow, error) {
	if s.pool == nil {
		return nil, errNotOpen
	}
	if limit <= 0 {
		return nil, nil
	}
	now = now.UTC()
	until := now.Add(lease).Truncate(time.Microsecond) // the column's precision
	var out []*rappel.AlertRow
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, o.sql(`SELECT `+alertColumns+` FROM {rows}
			WHERE status = $1 AND next_at <= $2 AND (claimed_until IS NULL OR claimed_until <= $2)
			ORDER BY sub, seq, record LIMIT $3 FOR UPDATE SKIP LOCKED`), rappel.AlertPending, now, limit+1)
		if err != nil {
			return fmt.Errorf("reading due %ss: %w", o.what, err)
		}
		due, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rappel.AlertRow, error) { return scanAlert(r) })
		if err != nil {
			return fmt.Errorf("reading due %ss: %w", o.what, err)
		}
		// The database's order (its collation) groups rows as well as Go's
		// byte order does; the rows are sorted in Go's once trimmed.
		out = rappel.TrimClaim(due, limit, func(r *rappel.AlertRow) (string, uint64) { return r.Sub, r.Seq })
		sortAlerts(out)
		b := &pgx.Batch{}
		for _, r := range out {
			r.ClaimedBy, r.ClaimedUntil = node, until
			b.Queue(o.sql(`UPDATE {rows} SET claimed_by = $3, claimed_until = $4 WHERE sub = $1 AND record = $2`), r.Sub, r.Record, node, until)
		}
		if b.Len() == 0 {
			return nil
		}
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return nil, fmt.Errorf("claiming %ss: %w", o.what, err)
	}
	return out, nil
}

// UpdateAlerts writes the rows still held by the claim they carry and
// releases those claims, in one transaction.
func (s *Store) UpdateAlerts(ctx context.Context, node string, rows []*rappel.AlertRow) (int, error) {
	return s.update(ctx, alertOutbox, node, rows)
}

func (s *Store) update(ctx context.Context, o outbox, node string, rows []*rappel.AlertRow) (int, error) {
	if s.pool == nil {
		return 0, errNotOpen
	}
	if len(rows) == 0 || node == "" {
		return 0, ctx.Err()
	}
	var n int
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		n = 0
		b := &pgx.Batch{}
		for _, r := range rows {
			b.Queue(o.sql(`UPDATE {rows} SET status = $3, attempts = $4, next_at = $5, sent_at = $6, error = $7,
					claimed_by = '', claimed_until = NULL
				WHERE sub = $1 AND record = $2 AND claimed_by = $8 AND claimed_until = $9`),
				r.Sub, r.Record, r.Status, r.Attempts, r.NextAt.UTC(), nullTime(r.SentAt), r.Error, node, nullTime(r.ClaimedUntil))
		}
		res := tx.SendBatch(ctx, b)
		for range b.Len() {
			tag, err := res.Exec()
			if err != nil {
				res.Close()
				return err
			}
			n += int(tag.RowsAffected())
		}
		return res.Close()
	})
	if err != nil {
		return 0, fmt.Errorf("updating %ss: %w", o.what, err)
	}
	return n, nil
}

// AlertDepth counts the alert e-mails waiting to be sent, fleet-wide, for
// the outbox metrics.
func (s *Store) AlertDepth(ctx context.Context) (rappel.OutboxDepth, error) {
	return s.depth(ctx, alertOutbox)
}

// ConfirmDepth counts the confirmation e-mails waiting to be sent,
// fleet-wide.
func (s *Store) ConfirmDepth(ctx context.Context) (rappel.OutboxDepth, error) {
	return s.depth(ctx, confirmOutbox)
}

// depth counts o's pending rows by e-mail (subscription and batch) in one
// query. The partial index of due rows (outboxTables) holds the pending
// rows only, so the sent and failed rows the retention keeps cost nothing:
// about 10 ms for 10,000 pending rows among 100,000, and 0.2 s when all
// 100,000 are pending, each its own e-mail (RATIONALE.md, "Why do the
// outbox gauges count e-mails").
func (s *Store) depth(ctx context.Context, o outbox) (rappel.OutboxDepth, error) {
	if s.pool == nil {
		return rappel.OutboxDepth{}, errNotOpen
	}
	var mails, rows int64
	var oldest *time.Time
	err := s.pool.QueryRow(ctx, o.sql(`SELECT count(*), COALESCE(sum(n), 0), min(oldest) FROM (
			SELECT count(*) AS n, min(created_at) AS oldest FROM {rows} WHERE status = $1 GROUP BY sub, seq) AS mails`),
		rappel.AlertPending).Scan(&mails, &rows, &oldest)
	if err != nil {
		return rappel.OutboxDepth{}, fmt.Errorf("counting pending %ss: %w", o.what, err)
	}
	d := rappel.OutboxDepth{Mails: int(mails), Rows: int(rows)}
	if oldest != nil {
		d.Oldest = oldest.UTC()
	}
	return d, nil
}

func (s *Store) pending(ctx context.Context, o outbox) (int, error) {
	if s.pool == nil {
		return 0, errNotOpen
	}
	var n int64
	if err := s.pool.QueryRow(ctx, o.sql(`SELECT count(*) FROM {rows} WHERE status = $1`), rappel.AlertPending).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting pending %ss: %w", o.what, err)
	}
	return int(n), nil
}

// nullTime is t, or NULL for the zero time.
func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC()
}

// sortAlerts orders rows as ClaimAlerts returns them.
func sortAlerts(rows []*rappel.AlertRow) {
	slices.SortFunc(rows, func(a, b *rappel.AlertRow) int {
		return cmp.Or(strings.Compare(a.Sub, b.Sub), cmp.Compare(a.Seq, b.Seq), strings.Compare(a.Record, b.Record))
	})
}

// PruneAlerts deletes the final rows created before before and the
// matched marks written before it. Each DELETE runs on its own: a mark
// outliving its rows, or rows outliving their mark, is harmless (see
// rappel.Outbox.PruneAlerts). The scan of final rows has no index; it
// runs once per prune interval.
func (s *Store) PruneAlerts(ctx context.Context, before time.Time) (int, int, error) {
	return s.prune(ctx, alertOutbox, before)
}

func (s *Store) prune(ctx context.Context, o outbox, before time.Time) (int, int, error) {
	if s.pool == nil {
		return 0, 0, errNotOpen
	}
	before = before.UTC()
	tag, err := s.pool.Exec(ctx, o.sql(`DELETE FROM {rows} WHERE status <> $1 AND created_at < $2`), rappel.AlertPending, before)
	if err != nil {
		return 0, 0, fmt.Errorf("pruning %ss: %w", o.what, err)
	}
	rows := int(tag.RowsAffected())
	if o.matched == "" {
		return rows, 0, nil
	}
	tag, err = s.pool.Exec(ctx, o.sql(`DELETE FROM {matched} WHERE matched_at < $1`), before)
	if err != nil {
		return rows, 0, fmt.Errorf("pruning %s marks: %w", o.what, err)
	}
	return rows, int(tag.RowsAffected()), nil
}

// confirmOutbox is the confirmation e-mails' table; CreatePending writes
// its rows.
var confirmOutbox = outbox{rows: "alert_confirmations", what: "confirmation e-mail"}

var _ rappel.ConfirmOutbox = (*Store)(nil)

// ClaimConfirmations claims due confirmation rows for node, as
// ClaimAlerts claims alert rows.
func (s *Store) ClaimConfirmations(ctx context.Context, node string, now time.Time, lease time.Duration, limit int) ([]*rappel.AlertRow, error) {
	return s.claim(ctx, confirmOutbox, node, now, lease, limit)
}

// UpdateConfirmations writes the confirmation rows still held by their
// claim, as UpdateAlerts writes alert rows.
func (s *Store) UpdateConfirmations(ctx context.Context, node string, rows []*rappel.AlertRow) (int, error) {
	return s.update(ctx, confirmOutbox, node, rows)
}

// PruneConfirmations deletes the final confirmation rows created before
// before.
func (s *Store) PruneConfirmations(ctx context.Context, before time.Time) (int, error) {
	rows, _, err := s.prune(ctx, confirmOutbox, before)
	return rows, err
}
