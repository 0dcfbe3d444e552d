package edge

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/rappel-ca/rappel"
)

// atomParams are the query parameters GET /recall/feed.atom accepts: the
// filters of GET /recall and how many entries.
var atomParams = append(slices.Clone(filterParams), "limit")

// Entries of the Atom feed: a feed reader shows the newest, and polls.
const (
	defaultAtomEntries = 50
	maxAtomEntries     = 100
)

// atomNS is the Atom 1.0 namespace (RFC 4287).
const atomNS = "http://www.w3.org/2005/Atom"

// atomCache lets shared caches and readers keep the feed for a refresh
// period (about 15 minutes): it is public, and the same for every reader.
var atomCache = []string{"public, max-age=900"}

type atomFeed struct {
	XMLName xml.Name    `xml:"http://www.w3.org/2005/Atom feed"`
	Lang    string      `xml:"xml:lang,attr"`
	ID      string      `xml:"id"`
	Title   atomText    `xml:"title"`
	Updated string      `xml:"updated"`
	Author  atomPerson  `xml:"author"`
	Links   []atomLink  `xml:"link"`
	Gen     string      `xml:"generator"`
	Entries []atomEntry `xml:"entry"`
}

type atomText struct {
	Type string `xml:"type,attr"`
	Text string `xml:",chardata"`
}

type atomPerson struct {
	Name string `xml:"name"`
	URI  string `xml:"uri,omitempty"`
}

type atomLink struct {
	Rel      string `xml:"rel,attr"`
	Type     string `xml:"type,attr,omitempty"`
	HrefLang string `xml:"hreflang,attr,omitempty"`
	Href     string `xml:"href,attr"`
}

type atomCategory struct {
	Term  string `xml:"term,attr"`
	Label string `xml:"label,attr,omitempty"`
}

type atomEntry struct {
	ID         string         `xml:"id"`
	Title      atomText       `xml:"title"`
	Updated    string         `xml:"updated"`
	Published  string         `xml:"published,omitempty"`
	Links      []atomLink     `xml:"link"`
	Categories []atomCategory `xml:"category"`
	Summary    *atomText      `xml:"summary"`
	Content    *atomText      `xml:"content"`
}

// atomID returns the entry id of what name names: a name-based (SHA-1,
// version 5) UUID URN, the same for the same name on every node and
// every run (RFC 4122, section 4.3), so that a reader never sees one
// record as two entries.
func atomID(name string) string {
	// The URL namespace of RFC 4122, appendix C.
	ns := [16]byte{0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}
	h := sha1.New()
	h.Write(ns[:])
	h.Write([]byte("https://github.com/rappel-ca/rappel#" + name))
	u := h.Sum(nil)[:16]
	u[6] = u[6]&0x0f | 0x50
	u[8] = u[8]&0x3f | 0x80
	x := hex.EncodeToString(u)
	return "urn:uuid:" + x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}

// atomDate writes a YYYY-MM-DD date as the RFC 3339 instant Atom wants:
// midnight UTC. ok is false for anything else.
func atomDate(d string) (string, bool) {
	if !rappel.ValidDate(d) {
		return "", false
	}
	return d + "T00:00:00Z", true
}

// getAtom answers GET /recall/feed.atom: the newest recalls (by
// recall_date) a search finds, as an Atom 1.0 feed (RFC 4287) in the
// language asked (English by default). It is public, so that any feed
// reader, which cannot send a header, can subscribe (docs/api.md, "Change
// feed, Atom and export"), and runs the search GET /recall runs.
func (s *Server) getAtom(w http.ResponseWriter, r *http.Request) error {
	p := paramsOf(w)
	q, err := filtersOf(p)
	if err != nil {
		return err
	}
	q.Limit = p.int("limit", 1, maxAtomEntries, defaultAtomEntries)
	if err := p.err(); err != nil {
		return err
	}
	lang := q.Lang
	if lang == "" {
		lang = rappel.LangEN
	}
	q.Lang = "" // both languages: a record without lang's text falls back to the other
	q.SortBy = rappel.SortPublished
	snap := s.Catalog.Snapshot()
	page, err := s.searchPage(r.Context(), w, snap, q, paidHere)
	if err != nil {
		return err
	}
	var recs []*rappel.Record
	if len(page.Results) > 0 {
		if err := json.Unmarshal(page.Results, &recs); err != nil {
			return fmt.Errorf("decoding the feed's records: %w", err)
		}
	}
	feed := atomFeedOf(recs, lang, s.selfURL(r), snap.Info().UpdatedAt)
	body, err := xml.Marshal(feed)
	if err != nil {
		return fmt.Errorf("encoding the Atom feed: %w", err)
	}
	setCachePublic(w)
	if !writeStreamHead(w, r, "application/atom+xml; charset=utf-8", etagOf(body), snap.Info()) {
		return nil
	}
	w.Header()["Cache-Control"] = atomCache
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write([]byte(xml.Header))
		w.Write(body)
	}
	return nil
}

// atomFeedOf builds the feed of recs. self is the feed's own URL; the
// feed's id is derived from its query, so that the same search is the
// same feed wherever it is served.
func atomFeedOf(recs []*rappel.Record, lang, self string, updated time.Time) *atomFeed {
	query := ""
	if u, err := url.Parse(self); err == nil {
		query = u.Query().Encode() // sorted: the same search, the same id
	}
	title := "Canadian product and vehicle recalls"
	if lang == rappel.LangFR {
		title = "Rappels de produits et de véhicules au Canada"
	}
	f := &atomFeed{
		Lang:   lang,
		ID:     atomID("feed.atom?" + query),
		Title:  atomText{Type: "text", Text: title},
		Author: atomPerson{Name: "Canadian Product and Vehicle Recall API"},
		Links:  []atomLink{{Rel: "self", Type: "application/atom+xml", Href: self}},
		Gen:    "Rappel",
	}
	latest := updated.UTC()
	for _, r := range recs {
		e := atomEntryOf(r, lang)
		if t, err := time.Parse(time.RFC3339, e.Updated); err == nil && t.After(latest) {
			latest = t
		}
		f.Entries = append(f.Entries, e)
	}
	if latest.IsZero() {
		latest = time.Unix(0, 0).UTC()
	}
	f.Updated = latest.Format(time.RFC3339)
	return f
}

// atomEntryOf is the entry of r in lang, its text falling back to the
// other language where lang's is missing.
func atomEntryOf(r *rappel.Record, lang string) atomEntry {
	tr, other := r.Translations.EN, r.Translations.FR
	link, otherLink := r.URLEn, r.URLFr
	if lang == rappel.LangFR {
		tr, other, link, otherLink = other, tr, otherLink, link
	}
	pick := func(f func(*rappel.Translation) string) string {
		for _, t := range []*rappel.Translation{tr, other} {
			if t != nil && f(t) != "" {
				return f(t)
			}
		}
		return ""
	}
	title := pick(func(t *rappel.Translation) string { return t.Title })
	if title == "" {
		title = r.RecordID
	}
	e := atomEntry{ID: atomID("recall/" + r.RecordID), Title: atomText{Type: "text", Text: title}}
	// updated: the latest of the record's dates, published its recall
	// date; a record always has a recall_date (Validate).
	latest := r.RecallDate
	for _, d := range []string{r.DateModified, r.LastUpdated} {
		if rappel.ValidDate(d) && d > latest {
			latest = d
		}
	}
	var ok bool
	if e.Updated, ok = atomDate(latest); !ok {
		e.Updated = time.Unix(0, 0).UTC().Format(time.RFC3339)
	}
	e.Published, _ = atomDate(r.RecallDate)
	if link == "" {
		link = pick(func(t *rappel.Translation) string { return t.URL })
	}
	if link == "" {
		link = otherLink
	}
	if link != "" {
		e.Links = append(e.Links, atomLink{Rel: "alternate", Type: "text/html", Href: link})
	}
	e.Categories = append(e.Categories, atomCategory{Term: r.RecallType})
	if r.Category != "" {
		e.Categories = append(e.Categories, atomCategory{Term: r.Category})
	}
	var parts []string
	for _, f := range []func(*rappel.Translation) string{
		func(t *rappel.Translation) string { return t.ProductDescription },
		func(t *rappel.Translation) string { return t.HazardDescription },
		func(t *rappel.Translation) string { return t.WhatToDo },
	} {
		if v := pick(f); v != "" {
			parts = append(parts, v)
		}
	}
	summary := strings.Join(parts, "\n\n")
	if summary == "" {
		summary = title
	}
	e.Summary = &atomText{Type: "text", Text: summary}
	if len(e.Links) == 0 {
		// An entry without an alternate link must have content (RFC
		// 4287, section 4.1.1.1).
		e.Content = &atomText{Type: "text", Text: summary}
	}
	return e
}

// selfURL is the feed's own URL: the request's path and query under
// PublicURL. It never comes from the Host header, which the client
// writes: the feed is public and cached for a refresh period, and a
// cache keyed without Host would hand a forged link to every reader.
// Without PublicURL the link is relative to the feed's own address, which
// RFC 4287 allows and feed readers resolve (docs/api.md, "Change feed, Atom
// and export").
func (s *Server) selfURL(r *http.Request) string {
	rel := (&url.URL{Path: r.URL.Path, RawQuery: r.URL.RawQuery}).String()
	if s.PublicURL == "" {
		return rel
	}
	return strings.TrimRight(s.PublicURL, "/") + rel
}
