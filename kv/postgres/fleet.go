package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rappel-ca/rappel"
)

var _ rappel.PublicationLog = (*Store)(nil)

// schemaFleet holds the feed lease, one row (id 1; no row means that no
// node ever held it), the publications of the leader, numbered from 1
// without gaps, and the plugins the leaders activated, one per source.
//
// A publication's info is JSONB, to be read with psql; its records and
// deletions are the JSON of publicationBody kept as BYTEA, so that the
// records come back byte for byte as the leader encoded them rather than
// through JSONB's normal form.
const schemaFleet = `
CREATE TABLE IF NOT EXISTS feed_lease (
	id         INT PRIMARY KEY CHECK (id = 1),
	holder     TEXT NOT NULL,
	token      BIGINT NOT NULL,
	expires_at TIMESTAMPTZ NOT NULL
);
CREATE TABLE IF NOT EXISTS feed_publications (
	version BIGINT PRIMARY KEY,
	node    TEXT NOT NULL,
	token   BIGINT NOT NULL,
	at      TIMESTAMPTZ NOT NULL,
	info    JSONB NOT NULL,
	body    BYTEA NOT NULL
);
CREATE TABLE IF NOT EXISTS fleet_plugins (
	source TEXT PRIMARY KEY,
	sha256 TEXT NOT NULL,
	wasm   BYTEA NOT NULL,
	why    TEXT NOT NULL,
	at     TIMESTAMPTZ NOT NULL
);
`

// schemaFleetSignatures keeps each fleet plugin's signature beside it, so
// that the leader's successor verifies it with its own trusted keys; a row
// written before has none, and a node with trusted keys does not adopt it.
const schemaFleetSignatures = `ALTER TABLE fleet_plugins ADD COLUMN IF NOT EXISTS signature BYTEA;`

// feedChannel is the PostgreSQL NOTIFY channel a publication is announced
// on, its version as the payload. It is a hint for a follower that would
// rather not wait for its next poll: CockroachDB has no NOTIFY, so a
// follower must poll LatestVersion anyway.
const feedChannel = "rappel_feed"

// publicationBody is what feed_publications.body holds.
type publicationBody struct {
	Put      []*rappel.Record                 `json:"put,omitempty"`
	Delete   []string                         `json:"delete,omitempty"`
	Gen      uint64                           `json:"gen,omitempty"`
	Changes  []rappel.PublishedChange         `json:"changes,omitempty"`
	Agencies []rappel.Agency                  `json:"agencies,omitempty"`
	Replace  bool                             `json:"replace,omitempty"`
	Seq      uint64                           `json:"seq,omitempty"`
	Source   *rappel.PublishedSource          `json:"source,omitempty"`
	Partials map[string][]*rappel.Record      `json:"partials,omitempty"`
	Raw      map[string][]rappel.PublishedRaw `json:"raw,omitempty"`
	States   []rappel.SourceState             `json:"states,omitempty"`
}

// The lease's times are the database's (now()), never a node's: nodes whose
// clocks disagree still agree on who leads and until when.

// acquireLease takes the lease when it is free, expired or held by $1. The
// token grows whenever a new term starts, that is unless $1 renews a lease
// it still holds: a node that let its lease expire and takes it back
// fences what it started under the old term too. When another node holds
// a live lease, the WHERE of the update is false and nothing is returned.
const acquireLease = `INSERT INTO feed_lease (id, holder, token, expires_at)
	VALUES (1, $1, 1, now() + $2::FLOAT8 * INTERVAL '1 second')
	ON CONFLICT (id) DO UPDATE SET
		holder = excluded.holder,
		token = CASE WHEN feed_lease.holder = excluded.holder AND feed_lease.expires_at > now()
			THEN feed_lease.token ELSE feed_lease.token + 1 END,
		expires_at = excluded.expires_at
	WHERE feed_lease.holder = excluded.holder OR feed_lease.expires_at <= now()
	RETURNING holder, token, expires_at`

// AcquireLease takes the feed lease for node for ttl, or renews it when
// node holds it; ok is false, with the holder's lease, when another node
// holds it.
func (s *Store) AcquireLease(ctx context.Context, node string, ttl time.Duration) (lease rappel.Lease, ok bool, err error) {
	if err := checkLeaseArgs(node, ttl); err != nil {
		return rappel.Lease{}, false, fmt.Errorf("acquiring the feed lease: %w", err)
	}
	if s.pool == nil {
		return rappel.Lease{}, false, errNotOpen
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, acquireLease, node, ttl.Seconds()).Scan(&lease.Holder, &lease.Token, &lease.Expires)
		if errors.Is(err, pgx.ErrNoRows) {
			err = tx.QueryRow(ctx, `SELECT holder, token, expires_at FROM feed_lease WHERE id = 1`).
				Scan(&lease.Holder, &lease.Token, &lease.Expires)
		}
		return err
	})
	if err != nil {
		return rappel.Lease{}, false, fmt.Errorf("acquiring the feed lease: %w", err)
	}
	return lease, lease.Holder == node, nil
}

// RenewLease extends the lease node holds under token by ttl, from now; ok
// is false when the lease expired or changed hands, even if no other node
// took it yet: the holder must acquire it again, under a new token.
func (s *Store) RenewLease(ctx context.Context, node string, token int64, ttl time.Duration) (bool, error) {
	if err := checkLeaseArgs(node, ttl); err != nil {
		return false, fmt.Errorf("renewing the feed lease: %w", err)
	}
	if s.pool == nil {
		return false, errNotOpen
	}
	tag, err := s.pool.Exec(ctx, `UPDATE feed_lease SET expires_at = now() + $3::FLOAT8 * INTERVAL '1 second'
		WHERE id = 1 AND holder = $1 AND token = $2 AND expires_at > now()`, node, token, ttl.Seconds())
	if err != nil {
		return false, fmt.Errorf("renewing the feed lease: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// ReleaseLease ends the lease node holds under token now. The row stays,
// with its token, so that the next holder's token is still greater.
func (s *Store) ReleaseLease(ctx context.Context, node string, token int64) error {
	if s.pool == nil {
		return errNotOpen
	}
	_, err := s.pool.Exec(ctx, `UPDATE feed_lease SET expires_at = now()
		WHERE id = 1 AND holder = $1 AND token = $2 AND expires_at > now()`, node, token)
	if err != nil {
		return fmt.Errorf("releasing the feed lease: %w", err)
	}
	return nil
}

// checkLeaseArgs refuses what would make a lease nobody can hold.
func checkLeaseArgs(node string, ttl time.Duration) error {
	if node == "" {
		return errors.New("the node is not named")
	}
	if ttl <= 0 {
		return fmt.Errorf("the lease's duration %s is not positive", ttl)
	}
	return nil
}

// Publish appends p as the next version, in one transaction that holds the
// lease row: publishers are serialized by that lock, so that max(version)+1
// is neither skipped nor taken twice (a sequence would leave gaps on
// rollback). A publication under a lease that expired or changed hands is
// refused with rappel.ErrFenced and writes nothing.
func (s *Store) Publish(ctx context.Context, p *rappel.Publication) (int64, error) {
	if s.pool == nil {
		return 0, errNotOpen
	}
	body, err := json.Marshal(publicationBody{Put: p.Put, Delete: p.Delete, Gen: p.Gen, Changes: p.Changes, Agencies: p.Agencies, Replace: p.Replace, Seq: p.Seq,
		Source: p.Source, Partials: p.Partials, Raw: p.Raw, States: p.States})
	if err != nil {
		return 0, fmt.Errorf("publishing refresh: encoding its records: %w", err)
	}
	var version int64
	var at time.Time
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if err := checkFence(ctx, tx, p.Node, p.Token); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT COALESCE(max(version), 0) + 1 FROM feed_publications`).Scan(&version); err != nil {
			return err
		}
		info := p.Info
		info.Version = version
		infoJSON, err := json.Marshal(info)
		if err != nil {
			return fmt.Errorf("encoding its dataset info: %w", err)
		}
		if err := tx.QueryRow(ctx, `INSERT INTO feed_publications (version, node, token, at, info, body)
			VALUES ($1, $2, $3, COALESCE($4, now()), $5, $6) RETURNING at`,
			version, p.Node, p.Token, nullTime(p.At), infoJSON, body).Scan(&at); err != nil {
			return err
		}
		return notifyPublished(ctx, tx, version)
	})
	if err != nil {
		return 0, fmt.Errorf("publishing refresh: %w", err)
	}
	p.Version, p.Info.Version, p.At = version, version, at
	return version, nil
}

// checkFence locks the lease row and returns rappel.ErrFenced, naming the
// holder, unless node holds a live lease under token.
func checkFence(ctx context.Context, tx pgx.Tx, node string, token int64) error {
	var holder string
	var held int64
	var live bool
	err := tx.QueryRow(ctx, `SELECT holder, token, expires_at > now() FROM feed_lease WHERE id = 1 FOR UPDATE`).
		Scan(&holder, &held, &live)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("%w: no node ever held it", rappel.ErrFenced)
	case err != nil:
		return fmt.Errorf("reading the feed lease: %w", err)
	case holder == node && held == token && live:
		return nil
	case !live:
		return fmt.Errorf("%w: %s's lease under token %d expired", rappel.ErrFenced, holder, held)
	default:
		return fmt.Errorf("%w: %s holds it under token %d", rappel.ErrFenced, holder, held)
	}
}

// notifyPublished announces version on feedChannel, on PostgreSQL only
// (CockroachDB has no NOTIFY). The notification is sent at commit, so a
// listener never hears of a version it cannot read yet. One more round
// trip per publication, that is per refresh, costs nothing worth caching.
func notifyPublished(ctx context.Context, tx pgx.Tx, version int64) error {
	var server string
	if err := tx.QueryRow(ctx, `SELECT version()`).Scan(&server); err != nil {
		return fmt.Errorf("reading the server's version: %w", err)
	}
	if strings.Contains(server, "CockroachDB") {
		return nil
	}
	if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, feedChannel, strconv.FormatInt(version, 10)); err != nil {
		return fmt.Errorf("announcing version %d: %w", version, err)
	}
	return nil
}

// Publications returns at most limit publications after version after,
// oldest first.
func (s *Store) Publications(ctx context.Context, after int64, limit int) ([]*rappel.Publication, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("reading publications: the limit %d is not positive", limit)
	}
	if s.pool == nil {
		return nil, errNotOpen
	}
	rows, err := s.pool.Query(ctx, `SELECT version, node, token, at, info, body FROM feed_publications
		WHERE version > $1 ORDER BY version LIMIT $2`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("reading publications after version %d: %w", after, err)
	}
	pubs, err := pgx.CollectRows(rows, scanPublication)
	if err != nil {
		return nil, fmt.Errorf("reading publications after version %d: %w", after, err)
	}
	return pubs, nil
}

// scanPublication decodes one row of feed_publications.
func scanPublication(row pgx.CollectableRow) (*rappel.Publication, error) {
	p := new(rappel.Publication)
	var info, body []byte
	if err := row.Scan(&p.Version, &p.Node, &p.Token, &p.At, &info, &body); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(info, &p.Info); err != nil {
		return nil, fmt.Errorf("version %d: decoding its dataset info: %w", p.Version, err)
	}
	var b publicationBody
	if err := json.Unmarshal(body, &b); err != nil {
		return nil, fmt.Errorf("version %d: decoding its records: %w", p.Version, err)
	}
	p.Put, p.Delete, p.Gen, p.Changes, p.Agencies, p.Replace, p.Seq = b.Put, b.Delete, b.Gen, b.Changes, b.Agencies, b.Replace, b.Seq
	p.Source, p.Partials, p.Raw, p.States = b.Source, b.Partials, b.Raw, b.States
	return p, nil
}

// LatestVersion returns the version of the last publication, 0 when none
// was made.
func (s *Store) LatestVersion(ctx context.Context) (int64, error) {
	if s.pool == nil {
		return 0, errNotOpen
	}
	var v int64
	if err := s.pool.QueryRow(ctx, `SELECT COALESCE(max(version), 0) FROM feed_publications`).Scan(&v); err != nil {
		return 0, fmt.Errorf("reading the latest publication's version: %w", err)
	}
	return v, nil
}

// PutFleetPlugin records p as its source's plugin for the fleet, with its
// signature, in one
// transaction that first checks, as Publish does, that node holds the
// lease under token: a leader's successor runs it. Another leader's is
// refused with rappel.ErrFenced.
func (s *Store) PutFleetPlugin(ctx context.Context, node string, token int64, p rappel.FleetPlugin) error {
	if s.pool == nil {
		return errNotOpen
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if err := checkFence(ctx, tx, node, token); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO fleet_plugins (source, sha256, wasm, signature, why, at) VALUES ($1, $2, $3, $4, $5, now())
			ON CONFLICT (source) DO UPDATE SET sha256 = excluded.sha256, wasm = excluded.wasm, signature = excluded.signature, why = excluded.why, at = excluded.at`,
			p.Source, p.SHA256, p.Wasm, p.Signature, p.Why)
		return err
	})
	if err != nil {
		return fmt.Errorf("recording the fleet's plugin for %s: %w", p.Source, err)
	}
	return nil
}

// FleetPlugins returns the plugin the fleet's leaders last activated for
// each source, by source name.
func (s *Store) FleetPlugins(ctx context.Context) ([]rappel.FleetPlugin, error) {
	if s.pool == nil {
		return nil, errNotOpen
	}
	rows, err := s.pool.Query(ctx, `SELECT source, sha256, wasm, signature, why, at FROM fleet_plugins ORDER BY source`)
	if err != nil {
		return nil, fmt.Errorf("reading the fleet's plugins: %w", err)
	}
	defer rows.Close()
	var out []rappel.FleetPlugin
	for rows.Next() {
		var p rappel.FleetPlugin
		if err := rows.Scan(&p.Source, &p.SHA256, &p.Wasm, &p.Signature, &p.Why, &p.At); err != nil {
			return nil, fmt.Errorf("reading the fleet's plugins: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the fleet's plugins: %w", err)
	}
	return out, nil
}
