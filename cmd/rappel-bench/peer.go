package main

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/bundle"
	"github.com/rappel-ca/rappel/vindecode"
)

// peerSearch is GET /recall as the peers understand it: the parameters the
// query set uses, parsed with rappel's own query parser so that every system
// is given the same query.
type peerSearch struct {
	Query        *rappel.Query
	RecallType   string
	Agency       string
	HazardClass  string
	IssuedAfter  string
	IssuedBefore string
	Limit        int
	// After is the keyset position of a cursor: the page starts after the
	// record with this event_date and record_id (event_date descending,
	// record_id ascending, as rappel sorts by default).
	AfterDate, AfterID string
}

// peerSearchOf reads a peer search from a request's query. Parameters the
// peers do not implement are refused, so that a query set the peers would
// answer differently fails loudly instead of measuring something else.
func peerSearchOf(r *http.Request) (*peerSearch, error) {
	s := &peerSearch{Limit: rappel.DefaultLimit}
	for name, vs := range r.URL.Query() {
		v := vs[0]
		switch name {
		case "q":
			q, err := rappel.ParseQuery(v)
			if err != nil {
				return nil, fmt.Errorf("parsing q: %w", err)
			}
			s.Query = q
		case "recall_type":
			s.RecallType = v
		case "recall_agency":
			s.Agency = v
		case "hazard_class":
			s.HazardClass = v
		case "issued_after":
			s.IssuedAfter = v
		case "issued_before":
			s.IssuedBefore = v
		case "limit":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > rappel.MaxLimit {
				return nil, fmt.Errorf("limit %q is not 1 to %d", v, rappel.MaxLimit)
			}
			s.Limit = n
		case "cursor":
			d, id, err := decodeCursor(v)
			if err != nil {
				return nil, err
			}
			s.AfterDate, s.AfterID = d, id
		default:
			return nil, fmt.Errorf("parameter %q is not implemented by this peer", name)
		}
	}
	return s, nil
}

// encodeCursor and decodeCursor are the peers' cursors: the last record's
// sort key, unsigned (a peer a user would deploy would sign it too).
func encodeCursor(date, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(date + "\x00" + id))
}

func decodeCursor(c string) (date, id string, err error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return "", "", fmt.Errorf("decoding cursor: %w", err)
	}
	date, id, ok := strings.Cut(string(b), "\x00")
	if !ok {
		return "", "", errors.New("decoding cursor: no record id")
	}
	return date, id, nil
}

// appendPage appends GET /recall's body in rappel's shape:
// {"entity_type":"recall","count":N,"results":[...],"next_cursor":C,"next":C}.
func appendPage(dst []byte, count int, bodies [][]byte, next string) []byte {
	dst = append(dst, `{"entity_type":"recall","count":`...)
	dst = strconv.AppendInt(dst, int64(count), 10)
	dst = append(dst, `,"results":[`...)
	for i, b := range bodies {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, b...)
	}
	dst = append(dst, ']')
	c := "null"
	if next != "" {
		c = `"` + next + `"`
	}
	dst = append(dst, `,"next_cursor":`...)
	dst = append(dst, c...)
	dst = append(dst, `,"next":`...)
	dst = append(dst, c...)
	return append(dst, '}')
}

// lookupResult is an element of the results of /recall/upc and /recall/vin.
type lookupResult struct {
	RecallID   string `json:"recall_id"`
	RecordID   string `json:"record_id"`
	RecallType string `json:"recall_type"`
	TitleEN    string `json:"title_en"`
	Match      string `json:"match,omitempty"`
}

// statsGroup is an element of by_recall_type in /recall/stats.
type statsGroup struct {
	Value string `json:"value"`
	Count int    `json:"count"`
}

// statsBody is GET /recall/stats?group_by=recall_type&period=all.
type statsBody struct {
	EntityType  string       `json:"entity_type"`
	PeriodDays  int          `json:"period_days"`
	IssuedAfter string       `json:"issued_after"`
	TotalInDB   int          `json:"total_in_db"`
	Total       int          `json:"total"`
	ByType      []statsGroup `json:"by_recall_type"`
}

// periodDays is the period of period=all: the days since the oldest record.
func periodDays(oldest string, now time.Time) int {
	t, err := time.Parse(time.DateOnly, oldest)
	if err != nil {
		return 0
	}
	return int(now.Sub(t).Hours() / 24)
}

// checkStats refuses stats parameters the peers do not implement.
func checkStats(r *http.Request) error {
	q := r.URL.Query()
	if g := q.Get("group_by"); g != "recall_type" {
		return fmt.Errorf("group_by %q is not implemented by this peer (only recall_type)", g)
	}
	if p := q.Get("period"); p != "all" {
		return fmt.Errorf("period %q is not implemented by this peer (only all)", p)
	}
	return nil
}

// vinKeys decodes a VIN into the vehicle keys the peers index:
// "MAKE|MODEL|YEAR" and "MAKE||YEAR".
func vinKeys(vin string) (full, makeYear string, err error) {
	v, err := rappel.ParseVIN(vin)
	if err != nil {
		return "", "", fmt.Errorf("parsing vin: %w", err)
	}
	d := vindecode.Decoder{}.Decode(v, time.Now())
	if d.Make == "" || d.Year == 0 {
		return "", "", nil
	}
	y := strconv.Itoa(d.Year)
	return d.Make + "|" + d.Model + "|" + y, d.Make + "||" + y, nil
}

// vehicleKeys returns the keys of a record's affected models, as vinKeys
// makes them from a VIN.
func vehicleKeys(r *rappel.Record) []string {
	var keys []string
	for _, m := range r.AffectedModels {
		if m.Year == 0 {
			continue
		}
		y := strconv.Itoa(m.Year)
		keys = append(keys, strings.ToUpper(m.Make)+"|"+strings.ToUpper(m.Model)+"|"+y, strings.ToUpper(m.Make)+"||"+y)
	}
	return keys
}

// gtins returns the GTIN-14 of every product barcode of a record.
func gtins(r *rappel.Record) []string {
	var out []string
	add := func(s string) {
		if g, err := rappel.ParseGTIN(s); err == nil {
			out = append(out, string(g))
		}
	}
	for _, p := range r.ProductList {
		if p.UPC != "" {
			add(p.UPC)
		}
	}
	if r.UPC != "" {
		add(r.UPC)
	}
	return out
}

// docText returns the searchable text of a record in English and French,
// each with the language-neutral text (names, firms, identifiers), as
// rappel's index streams hold it. Contact text and "what to do" are left
// out, as rappel leaves them out.
func docText(r *rappel.Record) (en, fr string) {
	var neutral []string
	add := func(ss ...string) {
		for _, s := range ss {
			if s != "" {
				neutral = append(neutral, s)
			}
		}
	}
	add(r.RecallID, r.Category, r.IdentificationNumber, r.ManufacturerRecallNumber, r.RecallingFirm,
		r.Manufacturer, r.Importer, r.PlaceOfOrigin, r.VehicleMake, r.VehicleModel, r.UPC)
	add(r.Categories...)
	add(r.Companies...)
	add(r.Distribution...)
	add(r.Allergens...)
	for _, p := range r.ProductList {
		add(p.Name, p.UPC)
		add(p.LotCodes...)
	}
	for _, m := range r.AffectedModels {
		add(m.Make, m.Model)
	}
	lang := func(t *rappel.Translation) string {
		if t == nil {
			return ""
		}
		return strings.Join([]string{t.Title, t.ProductDescription, t.HazardDescription, t.Category, t.System, t.VehicleCategory, t.NotificationType}, "\n")
	}
	n := strings.Join(neutral, "\n")
	return lang(r.Translations.EN) + "\n" + n, lang(r.Translations.FR) + "\n" + n
}

// bundleRecords reads every record of the bundle embedded in this binary,
// with each record's JSON encoded as rappel encodes it.
func bundleRecords() ([]*rappel.Record, map[string][]byte, error) {
	var recs []*rappel.Record
	bodies := map[string][]byte{}
	err := bundle.ReadRecords(bundle.Embedded(), func(r *rappel.Record) error {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		recs = append(recs, r)
		bodies[r.RecordID] = b
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("reading bundle records: %w", err)
	}
	return recs, bodies, nil
}

// titleEN is a record's English title, or its French one without it.
func titleEN(r *rappel.Record) string { return r.Title(rappel.LangEN) }

// serveHTTP serves h on addr until ctx is done. Peers answer errors as
// {"detail": ...} with a 400: the harness treats any non-200 as a failure.
func serveHTTP(ctx context.Context, addr string, h http.Handler, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	log.Info("serving", "addr", ln.Addr().String())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving: %w", err)
	}
	return nil
}

// writeBody writes a JSON body with status 200.
// queryPeer is a peer's answers to the query classes, each returning the
// JSON body, or the status and error of a refusal.
type queryPeer interface {
	search(*http.Request) ([]byte, int, error)
	stats(*http.Request) ([]byte, int, error)
	upc(*http.Request) ([]byte, int, error)
	vin(*http.Request) ([]byte, int, error)
	record(*http.Request) ([]byte, int, error)
}

// peerRoutes serves a peer's answers on rappel's paths, with /ready for the
// harness.
func peerRoutes(p queryPeer) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ready", func(w http.ResponseWriter, r *http.Request) { writeBody(w, []byte(`{"status":"ready"}`)) })
	mux.HandleFunc("GET /recall", handlePeer(p.search))
	mux.HandleFunc("GET /recall/stats", handlePeer(p.stats))
	mux.HandleFunc("GET /recall/upc", handlePeer(p.upc))
	mux.HandleFunc("GET /recall/vin", handlePeer(p.vin))
	mux.HandleFunc("GET /recall/{record_id}", handlePeer(p.record))
	return mux
}

func handlePeer(fn func(*http.Request) ([]byte, int, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, code, err := fn(r)
		if err != nil {
			writeDetail(w, code, err)
			return
		}
		writeBody(w, b)
	}
}

// upcAnswer answers GET /recall/upc as rappel does, with lookup finding the
// recalls of a GTIN-14 in the peer's store.
func upcAnswer(r *http.Request, lookup func(ctx context.Context, gtin string) ([]lookupResult, error)) ([]byte, int, error) {
	u := r.URL.Query().Get("upc")
	g, err := rappel.ParseGTIN(u)
	if err != nil {
		return nil, http.StatusBadRequest, fmt.Errorf("parsing upc: %w", err)
	}
	res, err := lookup(r.Context(), string(g))
	if err != nil {
		return nil, http.StatusInternalServerError, err
	}
	b, err := json.Marshal(map[string]any{"upc": u, "digits": rappel.StripBarcode(u), "gtin": string(g), "results": res})
	return b, http.StatusInternalServerError, err
}

func writeBody(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
}

// writeDetail writes a {"detail": ...} error.
func writeDetail(w http.ResponseWriter, code int, err error) {
	b, _ := json.Marshal(map[string]string{"detail": err.Error()})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(b)
}

// vinAnswer answers GET /recall/vin as rappel does, with lookup finding the
// vehicle recalls of a vehicle key in the peer's store: the make, model and
// year first, then the make and year when nothing matched them.
func vinAnswer(r *http.Request, lookup func(ctx context.Context, key, match string) ([]lookupResult, error)) ([]byte, int, error) {
	vin := r.URL.Query().Get("vin")
	full, makeYear, err := vinKeys(vin)
	if err != nil {
		return nil, http.StatusBadRequest, err
	}
	res := []lookupResult{}
	if full != "" {
		if res, err = lookup(r.Context(), full, "make_model_year"); err == nil && len(res) == 0 {
			res, err = lookup(r.Context(), makeYear, "make_year")
		}
		if err != nil {
			return nil, http.StatusInternalServerError, err
		}
	}
	b, err := json.Marshal(map[string]any{"vin": strings.ToUpper(vin), "results": res})
	return b, http.StatusInternalServerError, err
}

// The SQL peers (PostgreSQL and SQLite) share their schema's shape and the
// SQL of their filters, pages and lookups: both read $1, $2, … as the
// numbered arguments.

// sqlArgs are a statement's arguments; add returns the placeholder of v.
type sqlArgs []any

func (a *sqlArgs) add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

// filterConds appends a search's filters and date range to conds, as
// conditions on the records table's columns.
func filterConds(conds []string, s *peerSearch, args *sqlArgs) []string {
	for _, f := range []struct{ col, v string }{{"recall_type", s.RecallType}, {"agency", s.Agency}, {"hazard_class", s.HazardClass}} {
		if f.v != "" {
			conds = append(conds, f.col+" = "+args.add(f.v))
		}
	}
	if s.IssuedAfter != "" {
		conds = append(conds, "event_date >= "+args.add(s.IssuedAfter))
	}
	if s.IssuedBefore != "" {
		conds = append(conds, "event_date <= "+args.add(s.IssuedBefore))
	}
	return conds
}

// pageSQL returns the statement of a search's page (one row more than the
// limit, to know whether there is a next page) and of its exact count,
// with their arguments, from the conditions of the search. A cursor adds
// the keyset condition to the page alone. With bodiesApart, the bodies are
// in the table bodies, keyed by records.id: the page's rows are picked from
// records alone, then joined to their bodies.
func pageSQL(s *peerSearch, where []string, args sqlArgs, bodiesApart bool) (page string, pageArgs sqlArgs, count string) {
	pageWhere, pageArgs := where, slices.Clone(args)
	if s.AfterID != "" {
		d, id := pageArgs.add(s.AfterDate), pageArgs.add(s.AfterID)
		pageWhere = append(slices.Clone(where), fmt.Sprintf("(event_date < %s OR (event_date = %s AND record_id > %s))", d, d, id))
	}
	const order = ` ORDER BY event_date DESC, record_id`
	limit := ` LIMIT ` + strconv.Itoa(s.Limit+1)
	page = `SELECT event_date, record_id, body FROM records` + whereSQL(pageWhere) + order + limit
	if bodiesApart {
		page = `SELECT event_date, record_id, body FROM records JOIN bodies USING (id) WHERE id IN (SELECT id FROM records` + whereSQL(pageWhere) + order + limit + `)` + order
	}
	return page, pageArgs, `SELECT count(*) FROM records` + whereSQL(where)
}

func whereSQL(conds []string) string {
	if len(conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(conds, " AND ")
}

// sqlRows are the rows of a query, as pgx and database/sql both give them.
type sqlRows interface {
	Next() bool
	Scan(...any) error
	Err() error
}

// readPage reads the rows of pageSQL's page: the bodies of the page and the
// cursor of the next one.
func readPage(rows sqlRows, limit int) (bodies [][]byte, next string, err error) {
	var lastDate, lastID string
	for rows.Next() {
		var d, id string
		var body []byte
		if err := rows.Scan(&d, &id, &body); err != nil {
			return nil, "", fmt.Errorf("reading page: %w", err)
		}
		if len(bodies) == limit {
			return bodies, encodeCursor(lastDate, lastID), nil
		}
		bodies = append(bodies, body)
		lastDate, lastID = d, id
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("reading page: %w", err)
	}
	return bodies, "", nil
}

// readPageAndCount reads the rows of pageSQL's page (err being the page
// query's, and done closing its rows), then the count's one row.
func readPageAndCount(limit int, rows sqlRows, done func(), err error, count func() sqlRow) ([][]byte, string, int, error) {
	if err != nil {
		return nil, "", 0, fmt.Errorf("querying page: %w", err)
	}
	bodies, next, err := readPage(rows, limit)
	done()
	if err != nil {
		return nil, "", 0, err
	}
	var n int
	if err := count().Scan(&n); err != nil {
		return nil, "", 0, fmt.Errorf("counting: %w", err)
	}
	return bodies, next, n, nil
}

// statsSQL are the statements of /recall/stats: the oldest date and the
// total, then the count of each recall type, largest first.
const (
	statsTotalSQL = `SELECT min(event_date), count(*) FROM records`
	statsGroupSQL = `SELECT recall_type, count(*) FROM records GROUP BY 1 ORDER BY 2 DESC, 1`
)

// lookupSQL finds the records whose key in table (upcs.gtin or
// vehicles.vkey) is $1, newest first; the last %s is an extra condition.
const lookupSQL = `SELECT r.recall_id, r.record_id, r.recall_type, r.title_en FROM %s k JOIN records r USING (record_id)
	WHERE k.%s = $1 %s ORDER BY r.event_date DESC, r.record_id`

// vehicleOnly is lookupSQL's condition for VIN lookups.
const vehicleOnly = `AND r.recall_type = 'vehicle'`

// sqlRow is a query's one row, as pgx and database/sql both give it.
type sqlRow interface{ Scan(...any) error }

// sqlQuerier runs a SQL peer's statements; done closes query's rows.
type sqlQuerier interface {
	query(ctx context.Context, sql string, args ...any) (rows sqlRows, done func(), err error)
	queryRow(ctx context.Context, sql string, args ...any) sqlRow
	// pageAndCount runs pageSQL's statements, as the database runs two
	// statements best, and returns the page's bodies, the next page's
	// cursor and the count.
	pageAndCount(ctx context.Context, limit int, page string, pageArgs sqlArgs, count string, args sqlArgs) ([][]byte, string, int, error)
}

// sqlPeer answers the query set from a SQL database: PostgreSQL's and
// SQLite's schemas hold the same columns and lookup tables, and both
// drivers read the same SQL but for text search, which where translates.
type sqlPeer struct {
	db    sqlQuerier
	where func(*peerSearch) ([]string, sqlArgs)
	// bodiesApart is pageSQL's.
	bodiesApart bool
	now         func() time.Time
}

func (a *sqlPeer) routes() http.Handler { return peerRoutes(a) }

// loadAndServe loads the embedded bundle's records with load, then serves
// p on addr until ctx is done.
func loadAndServe(ctx context.Context, addr string, log *slog.Logger, load func([]*rappel.Record, map[string][]byte) error, p *sqlPeer) error {
	recs, bodies, err := bundleRecords()
	if err != nil {
		return err
	}
	if err := load(recs, bodies); err != nil {
		return err
	}
	// The database serves the records from here on: the heap that read
	// them goes back to the system, so that the memory measured is the
	// server's, not the loader's.
	recs, bodies = nil, nil
	debug.FreeOSMemory()
	return serveHTTP(ctx, addr, p.routes(), log)
}

func (a *sqlPeer) search(r *http.Request) ([]byte, int, error) {
	s, err := peerSearchOf(r)
	if err != nil {
		return nil, http.StatusBadRequest, err
	}
	where, args := a.where(s)
	page, pageArgs, count := pageSQL(s, where, args, a.bodiesApart)
	bodies, next, n, err := a.db.pageAndCount(r.Context(), s.Limit, page, pageArgs, count, args)
	if err != nil {
		return nil, http.StatusInternalServerError, err
	}
	return appendPage(make([]byte, 0, 256<<10), n, bodies, next), 0, nil
}

func (a *sqlPeer) record(r *http.Request) ([]byte, int, error) {
	q := `SELECT body FROM records WHERE record_id = $1`
	if a.bodiesApart {
		q = `SELECT body FROM records JOIN bodies USING (id) WHERE record_id = $1`
	}
	var body []byte
	err := a.db.queryRow(r.Context(), q, r.PathValue("record_id")).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) { // pgx's ErrNoRows is one too
		return nil, http.StatusNotFound, fmt.Errorf("no record %q", r.PathValue("record_id"))
	} else if err != nil {
		return nil, http.StatusInternalServerError, fmt.Errorf("querying record: %w", err)
	}
	return body, 0, nil
}

func (a *sqlPeer) stats(r *http.Request) ([]byte, int, error) {
	if err := checkStats(r); err != nil {
		return nil, http.StatusBadRequest, err
	}
	out := statsBody{EntityType: "recall", ByType: []statsGroup{}}
	var oldest *string
	if err := a.db.queryRow(r.Context(), statsTotalSQL).Scan(&oldest, &out.TotalInDB); err != nil {
		return nil, http.StatusInternalServerError, fmt.Errorf("querying totals: %w", err)
	}
	rows, done, err := a.db.query(r.Context(), statsGroupSQL)
	if err != nil {
		return nil, http.StatusInternalServerError, fmt.Errorf("grouping: %w", err)
	}
	defer done()
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
		out.PeriodDays = periodDays(*oldest, a.now())
	}
	b, err := json.Marshal(out)
	return b, http.StatusInternalServerError, err
}

// lookup runs lookupSQL on table's col with extra.
func (a *sqlPeer) lookup(ctx context.Context, table, col, key, extra, match string) ([]lookupResult, error) {
	rows, done, err := a.db.query(ctx, fmt.Sprintf(lookupSQL, table, col, extra), key)
	if err != nil {
		return nil, fmt.Errorf("looking up %s: %w", table, err)
	}
	defer done()
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

func (a *sqlPeer) upc(r *http.Request) ([]byte, int, error) {
	return upcAnswer(r, func(ctx context.Context, gtin string) ([]lookupResult, error) {
		return a.lookup(ctx, "upcs", "gtin", gtin, "", "")
	})
}

func (a *sqlPeer) vin(r *http.Request) ([]byte, int, error) {
	return vinAnswer(r, func(ctx context.Context, key, match string) ([]lookupResult, error) {
		return a.lookup(ctx, "vehicles", "vkey", key, vehicleOnly, match)
	})
}
