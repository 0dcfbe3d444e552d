package edge

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/rappel-ca/rappel"
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
// adding columns at the end (README, "Change feed, Atom and export"). List
// fields join their values with "; ".
var csvHeader = []string{
	"record_id", "recall_id", "recall_type", "agency", "status", "event_date", "recall_date",
	"category", "hazard_class", "title_en", "title_fr", "url_en", "url_fr",
	"allergens", "products", "upcs", "vehicle_make", "vehicle_model", "units_affected",
	"recalling_firm", "fetched_at",
}

// csvRow appends the CSV fields of r, in csvHeader's order.
func csvRow(dst []string, r *rappel.Record) []string {
	var titleEN, titleFR string
	if r.Translations.EN != nil {
		titleEN = r.Translations.EN.Title
	}
	if r.Translations.FR != nil {
		titleFR = r.Translations.FR.Title
	}
	var names, upcs []string
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
	return append(dst[:0], r.RecordID, r.RecallID, r.RecallType, r.Agency, r.Status, r.EventDate, r.RecallDate,
		r.Category, r.HazardClass, titleEN, titleFR, r.URLEn, r.URLFr,
		strings.Join(r.Allergens, "; "), strings.Join(names, "; "), strings.Join(upcs, "; "),
		r.VehicleMake, r.VehicleModel, units, r.RecallingFirm, r.FetchedAt)
}

// getExport answers GET /recall/export: every record GET /recall finds for
// the same filters, in its default order, as NDJSON (one record per line,
// as GET /recall/{record_id} shapes it) or CSV (csvHeader). The body is
// streamed a page of the searcher at a time from one snapshot, so that
// memory does not grow with the export, and compressed by the compress
// middleware as it goes. Rappel-Count says how many records follow, and
// Rappel-Changes-Cursor where to follow the change feed from.
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
	page, err := s.searchPage(r.Context(), w, snap, q, true)
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
	out := bufio.NewWriterSize(w, 32<<10)
	var write func(*rappel.Page) error
	if format == "csv" {
		write = csvWriter(out)
	} else {
		write = ndjsonWriter(out)
	}
	for {
		if err := write(page); errors.Is(err, errClientGone) {
			return nil // no one left to tell, and nothing wrong here
		} else if err != nil {
			return err
		}
		if page.NextCursor == "" {
			break
		}
		q.Cursor = page.NextCursor
		if page, err = s.searchPage(r.Context(), w, snap, q, false); err != nil {
			// The status is sent: the error is logged, and the client
			// sees a body cut short (no last newline, or a broken
			// compressed stream).
			return err
		}
	}
	// A failed flush is the client gone too.
	_ = out.Flush()
	return nil
}

// changePositioned is a snapshot that knows the place in the store's
// change log it holds every change up to (the read index's View).
type changePositioned interface {
	ChangePos() (gen, seq uint64, ok bool)
}

// searchPage runs one search of q on snap within the query budget,
// admitted as GET /recall's searches are (an expensive one waits for a
// slot of the pool). first charges the key for the search: an export
// pays its cost once, for its first page, so that a long export is never
// cut by the rate limit once its status is sent.
func (s *Server) searchPage(ctx context.Context, w http.ResponseWriter, snap rappel.Snapshot, q *rappel.Search, first bool) (*rappel.Page, error) {
	ctx, cancel := context.WithTimeout(ctx, s.QueryBudget)
	defer cancel()
	release, err := s.admitSearch(&ctx, w, snap, q, first)
	if err != nil {
		return nil, searchError(err)
	}
	defer release()
	q.Buf = nil // each page its own: the caller writes one while reading the next
	page, err := snap.Search(ctx, q)
	if err != nil {
		return nil, searchError(err)
	}
	return page, nil
}

// errClientGone wraps a failure to write the export: the client closed
// the connection, which is not the server's failure to log.
var errClientGone = errors.New("the client stopped reading the export")

// ndjsonWriter returns a function writing a page's records to out, one a
// line.
func ndjsonWriter(out *bufio.Writer) func(*rappel.Page) error {
	var recs []json.RawMessage
	return func(page *rappel.Page) error {
		recs = recs[:0]
		if len(page.Results) > 0 {
			if err := json.Unmarshal(page.Results, &recs); err != nil {
				return fmt.Errorf("splitting a page of the export: %w", err)
			}
		}
		for _, rec := range recs {
			out.Write(rec)
			if err := out.WriteByte('\n'); err != nil {
				return fmt.Errorf("%w: %w", errClientGone, err)
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
	var recs []*rappel.Record
	var row []string
	return func(page *rappel.Page) error {
		if !header {
			header = true
			if err := cw.Write(csvHeader); err != nil {
				return fmt.Errorf("%w: %w", errClientGone, err)
			}
		}
		recs = recs[:0]
		if len(page.Results) > 0 {
			if err := json.Unmarshal(page.Results, &recs); err != nil {
				return fmt.Errorf("decoding a page of the export: %w", err)
			}
		}
		for _, rec := range recs {
			row = csvRow(row, rec)
			if err := cw.Write(row); err != nil {
				return fmt.Errorf("%w: %w", errClientGone, err)
			}
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return fmt.Errorf("%w: %w", errClientGone, err)
		}
		return nil
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
