package edge

import (
	"bufio"
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/jsonx"
)

// exportParams are the query parameters GET /recall/export accepts: the
// filters of GET /recall and the format.
var exportParams = append(slices.Clone(filterParams), "format")

// exportFormats are the values of format.
var exportFormats = rappel.Vocabulary{"ndjson", "csv"}

// exportPage is how many records the export reads from the searcher at a
// time: the most a page of GET /recall holds, so that memory stays that
// of one page (about 1.3 MB in both languages) whatever the export's size.
const exportPage = rappel.MaxLimit

// csvHeader is the export's CSV header, which does not change but by
// adding columns at the end (docs/api.md, "Change feed, Atom and export"). List
// fields join their values with "; ".
var csvHeader = []string{
	"record_id", "recall_id", "recall_type", "agency", "status", "event_date", "recall_date",
	"category", "hazard_class", "title_en", "title_fr", "url_en", "url_fr",
	"allergens", "products", "upcs", "vehicle_make", "vehicle_model", "units_affected",
	"recalling_firm", "fetched_at",
}

// csvRecord is what a CSV row needs of a record. Decoding only these
// fields skips the texts (descriptions, what to do, images) that make
// most of a record's bytes, and that decoding whole records spent most of
// a CSV export's time allocating.
type csvRecord struct {
	RecordID     string `json:"record_id"`
	RecallID     string `json:"recall_id"`
	RecallType   string `json:"recall_type"`
	Agency       string `json:"agency"`
	Status       string `json:"status"`
	EventDate    string `json:"event_date"`
	RecallDate   string `json:"recall_date"`
	Translations struct {
		EN, FR *struct {
			Title string `json:"title"`
		}
	} `json:"translations"`
	FetchedAt   string   `json:"fetched_at"`
	URLEn       string   `json:"url_en"`
	URLFr       string   `json:"url_fr"`
	Category    string   `json:"category"`
	HazardClass string   `json:"hazard_class"`
	Allergens   []string `json:"allergens"`
	ProductList []struct {
		Name string `json:"name"`
		UPC  string `json:"upc"`
	} `json:"product_list"`
	UPC           string `json:"upc"`
	VehicleMake   string `json:"vehicle_make"`
	VehicleModel  string `json:"vehicle_model"`
	UnitsAffected *int   `json:"units_affected"`
	RecallingFirm string `json:"recalling_firm"`
}

// csvRow appends the CSV fields of r, in csvHeader's order, each made
// safe to open in a spreadsheet (neutralizeCell). names and upcs are
// scratch space, returned for the next row.
func csvRow(dst, names, upcs []string, r *csvRecord) (row, namesOut, upcsOut []string) {
	var titleEN, titleFR string
	if r.Translations.EN != nil {
		titleEN = r.Translations.EN.Title
	}
	if r.Translations.FR != nil {
		titleFR = r.Translations.FR.Title
	}
	names, upcs = names[:0], upcs[:0]
	for _, p := range r.ProductList {
		if p.Name != "" {
			names = append(names, p.Name)
		}
		if p.UPC != "" {
			upcs = append(upcs, p.UPC)
		}
	}
	if r.UPC != "" && !slices.Contains(upcs, r.UPC) {
		upcs = append(upcs, r.UPC)
	}
	units := ""
	if r.UnitsAffected != nil {
		units = strconv.Itoa(*r.UnitsAffected)
	}
	row = append(dst[:0], r.RecordID, r.RecallID, r.RecallType, r.Agency, r.Status, r.EventDate, r.RecallDate,
		r.Category, r.HazardClass, titleEN, titleFR, r.URLEn, r.URLFr,
		strings.Join(r.Allergens, "; "), strings.Join(names, "; "), strings.Join(upcs, "; "),
		r.VehicleMake, r.VehicleModel, units, r.RecallingFirm, r.FetchedAt)
	for i, cell := range row {
		row[i] = neutralizeCell(cell)
	}
	return row, names, upcs
}

// neutralizeCell returns cell as a spreadsheet shows it as text, never as
// a formula (docs/api.md, "Change feed, Atom and export"), following OWASP's
// advice on CSV injection: a cell a spreadsheet could read as a formula
// gets a single quote in front, which spreadsheets take as "this is
// text" and do not show. That is a cell starting with = + - @, a tab, a
// carriage return or a NUL; one that starts with = + - @ once its leading
// spaces, control and invisible characters are trimmed, as some
// spreadsheets trim them; and one starting with a quote already, so that
// a leading quote is always the added one and dropping it gives the
// record's text back.
func neutralizeCell(cell string) string {
	if cell == "" {
		return cell
	}
	switch cell[0] {
	case '=', '+', '-', '@', '\t', '\r', 0, '\'':
		return "'" + cell
	}
	if c := cell[0]; c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' {
		return cell // the common case, decided on the first byte
	}
	if trimmed := strings.TrimLeftFunc(cell, invisible); trimmed != "" && strings.IndexByte("=+-@", trimmed[0]) >= 0 {
		return "'" + cell
	}
	return cell
}

// invisible reports whether a spreadsheet may trim r from the start of a
// cell before reading it: white space, control characters and format
// characters such as the zero-width space and the byte-order mark.
func invisible(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
}

// getExport answers GET /recall/export: every record GET /recall finds for
// the same filters, in its default order, as NDJSON (one record per line,
// as GET /recall/{record_id} shapes it) or CSV (csvHeader). The body is
// streamed a page of the searcher at a time from one snapshot, so that
// memory does not grow with the export, and compressed by the compress
// middleware as it goes. Rappel-Count says how many records follow, and
// Rappel-Changes-Cursor where to follow the change feed from. At most
// ExportSlots exports stream at once; one more is a 503.
func (s *Server) getExport(w http.ResponseWriter, r *http.Request) error {
	p := paramsOf(w)
	format := p.enum("format", exportFormats)
	q, err := filtersOf(p)
	if err != nil {
		return err
	}
	if err := p.err(); err != nil {
		return err
	}
	if format == "" {
		format = "ndjson"
	}
	release, err := s.admitExport()
	if err != nil {
		return err
	}
	defer release()
	// The change feed's place first, then the snapshot: a change made in
	// between is exported and seen again in the feed, never missed. That
	// holds when the snapshot follows the store; one that says what it
	// holds (changePositioned) is asked instead.
	var cursor string
	if s.Changes != nil {
		pos, err := s.Changes.ReadChanges(r.Context(), 0, 0, 0)
		if err != nil {
			return err
		}
		cursor = changeCursor{gen: pos.Gen, seq: pos.Last}.String()
	}
	snap := s.Catalog.Snapshot()
	if p, ok := snap.(changePositioned); ok {
		// A view that knows which changes it holds gives the exact
		// place, even when the read index is a refresh behind the store.
		if gen, seq, ok := p.ChangePos(); ok {
			cursor = changeCursor{gen: gen, seq: seq}.String()
		}
	}
	q.Limit = exportPage
	page, err := s.searchPage(r.Context(), w, snap, q, paidHere)
	if err != nil {
		return err
	}

	h := w.Header()
	ctype, name := "application/x-ndjson", "recalls.ndjson"
	if format == "csv" {
		ctype, name = "text/csv; charset=utf-8; header=present", "recalls.csv"
	}
	if !writeStreamHead(w, r, ctype, pageETag(snap.Info(), "export?"+r.URL.RawQuery), snap.Info()) {
		return nil
	}
	h.Set("Content-Disposition", `attachment; filename="`+name+`"`)
	h.Set("Rappel-Count", strconv.Itoa(page.Count))
	if cursor != "" {
		h.Set(changesCursorHeader, cursor)
	}
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	return s.streamExport(w, r, snap, q, page, format)
}

// streamExport writes page and the pages after it until the data ends.
// Once the status is sent, the export ends early only when its client
// stops reading for StallTimeout or closes the connection, when a page
// misses its query budget, or at shutdown; the exchange records which,
// for the access log, and the connection is closed without the end of
// the body, so that the client can tell (docs/api.md, "Change feed, Atom and
// export").
func (s *Server) streamExport(w http.ResponseWriter, r *http.Request, snap rappel.Snapshot, q *rappel.Search, page *rappel.Page, format string) error {
	x := exchangeOf(w)
	defer s.countExport(format, x)()
	x.streamWrites(s.stallTimeout())
	out := bufio.NewWriterSize(w, 32<<10)
	var write func(*rappel.Page) error
	if format == "csv" {
		write = csvWriter(out)
	} else {
		write = ndjsonWriter(out)
	}
	for {
		if err := write(page); err != nil {
			return s.cutExport(r, x, err)
		}
		if page.NextCursor == "" {
			break
		}
		q.Cursor = page.NextCursor
		var err error
		if page, err = s.searchPage(r.Context(), w, snap, q, paidBefore); err != nil {
			// The pages written go out whole before the cut.
			_ = out.Flush()
			return s.cutExport(r, x, err)
		}
	}
	if err := out.Flush(); err != nil {
		return s.cutExport(r, x, err)
	}
	return nil
}

// cutExport records why an export whose status is sent ends on err, and
// returns the error to log: nil when nothing failed on the node's side.
func (s *Server) cutExport(r *http.Request, x *exchange, err error) error {
	switch {
	case x.cut != "":
		// A write failed: the exchange knows whether the client stopped
		// reading or closed the connection.
		return nil
	case r.Context().Err() != nil:
		// The connection closed while a page was read.
		if s.stopping.Load() {
			x.cutShort(cutShutdown)
		} else {
			x.gone = true
			x.cutShort(cutClientClosed)
		}
		return nil
	case rappel.ErrorCode(err) == rappel.ETIMEOUT:
		x.cutShort(cutPageBudget)
		return nil
	}
	x.cutShort(cutServerError)
	return err
}

// Defaults of Server.ExportSlots and Server.StallTimeout.
const (
	// DefaultExportSlots is the exports streamed at once per core
	// (GOMAXPROCS): an export to a fast client keeps a core busy, and
	// one to a slow client waits on it most of the time.
	DefaultExportSlots = 2
	// DefaultStallTimeout is the time a client may take no bytes of an
	// export before it is cut: a client still reading at all keeps it.
	DefaultStallTimeout = 30 * time.Second
)

// exportRetryAfter is the Retry-After of an export refused for want of a
// slot: a whole export to a fast client takes a few seconds.
const exportRetryAfter = 10 * time.Second

// stallTimeout is StallTimeout or its default.
func (s *Server) stallTimeout() time.Duration {
	if s.StallTimeout > 0 {
		return s.StallTimeout
	}
	return DefaultStallTimeout
}

// exportSlots returns the slots of the exports streaming, made on first
// use with ExportSlots places.
func (s *Server) exportSlots() chan struct{} {
	s.exportsOnce.Do(func() {
		n := s.ExportSlots
		if n <= 0 {
			n = DefaultExportSlots * runtime.GOMAXPROCS(0)
		}
		s.exports = make(chan struct{}, n)
	})
	return s.exports
}

// admitExport takes a slot for an export and returns its release, or a
// 503 with Retry-After when every slot is taken: an export that waited
// for one would hold its client with no byte sent, and a client told to
// come back can choose when.
func (s *Server) admitExport() (func(), error) {
	slots := s.exportSlots()
	select {
	case slots <- struct{}{}:
		return func() { <-slots }, nil
	default:
	}
	return nil, &rappel.Error{Code: rappel.EUNAVAILABLE, RetryAfter: exportRetryAfter, Message: fmt.Sprintf(
		"This node is already streaming %d exports, as many as it streams at once; retry in %d s (Retry-After), or export fewer records with a filter or a date range so that each export ends sooner.",
		cap(slots), ceilSeconds(exportRetryAfter))}
}

// changePositioned is a snapshot that knows the place in the store's
// change log it holds every change up to (the read index's View).
type changePositioned interface {
	ChangePos() (gen, seq uint64, ok bool)
}

// searchPage runs one search of q on snap within the query budget,
// checked, then admitted as GET /recall's searches are (an expensive one
// waits for a slot of the pool). An export pays its cost once, for its
// first page, so that a long export is never cut by the rate limit once
// its status is sent.
func (s *Server) searchPage(ctx context.Context, w http.ResponseWriter, snap rappel.Snapshot, q *rappel.Search, pay searchPayment) (*rappel.Page, error) {
	q.Buf = nil // each page its own: the caller writes one while reading the next
	checked, err := q.Checked()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.QueryBudget)
	defer cancel()
	ctx, release, err := s.admitSearch(ctx, w, snap, checked, pay)
	if err != nil {
		return nil, searchError(err)
	}
	defer release()
	page, err := snap.Search(ctx, checked)
	if err != nil {
		return nil, searchError(err)
	}
	return page, nil
}

// ndjsonWriter returns a function writing a page's records to out, one a
// line.
func ndjsonWriter(out *bufio.Writer) func(*rappel.Page) error {
	var recs [][]byte
	return func(page *rappel.Page) error {
		var err error
		if recs, err = splitRecords(recs[:0], page.Results); err != nil {
			return fmt.Errorf("splitting a page of the export: %w", err)
		}
		for _, rec := range recs {
			out.Write(rec)
			if err := out.WriteByte('\n'); err != nil {
				return err
			}
		}
		return nil
	}
}

// csvWriter returns a function writing a page's records to out as CSV
// rows (RFC 4180: CRLF line ends, fields with a comma, quote or line end
// quoted), the header first.
func csvWriter(out *bufio.Writer) func(*rappel.Page) error {
	cw := csv.NewWriter(out)
	cw.UseCRLF = true
	header := false
	var row, names, upcs []string
	return func(page *rappel.Page) error {
		if !header {
			header = true
			if err := cw.Write(csvHeader); err != nil {
				return err
			}
		}
		// A new slice each page: a reused element would keep a field
		// its next record lacks.
		var recs []csvRecord
		if len(page.Results) > 0 {
			if err := jsonx.Unmarshal(page.Results, &recs); err != nil {
				return fmt.Errorf("decoding a page of the export: %w", err)
			}
		}
		for i := range recs {
			row, names, upcs = csvRow(row, names, upcs, &recs[i])
			if err := cw.Write(row); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	}
}

// writeStreamHead sets the headers of a streamed read of ctype that is a
// function of the dataset (info) and the query, whose ETag is etag: the
// caching headers writeJSON would set, Last-Modified, and the content
// type. It answers 304 itself, returning false, when If-None-Match holds
// the tag or If-Modified-Since is not before the data's time.
func writeStreamHead(w http.ResponseWriter, r *http.Request, ctype, etag string, info rappel.DatasetInfo) bool {
	h := w.Header()
	x := exchangeOf(w)
	cc, tagged := cacheControl(r, x, http.StatusOK)
	h["Cache-Control"] = cc
	if !info.UpdatedAt.IsZero() {
		h.Set("Last-Modified", info.UpdatedAt.UTC().Format(http.TimeFormat))
	}
	if tagged {
		notModified := false
		if inm, ok := r.Header["If-None-Match"]; ok {
			notModified = !noneMatch(inm, etag)
		} else if ims, err := http.ParseTime(r.Header.Get("If-Modified-Since")); err == nil && !info.UpdatedAt.IsZero() {
			notModified = !info.UpdatedAt.Truncate(1e9).After(ims)
		}
		if notModified {
			h.Set("Etag", taggedETag(etag, wouldEncodeAs(w, minCompressSize, ctype)))
			w.WriteHeader(http.StatusNotModified)
			return false
		}
		h.Set("Etag", etag)
	}
	h.Set("Content-Type", ctype)
	return true
}
