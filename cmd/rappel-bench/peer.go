package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
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
