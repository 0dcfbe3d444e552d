package edge

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// The Atom document as the checker reads it: every child element that
// RFC 4287 counts is a slice, so that "exactly one" can be checked.
type (
	xAtomText struct {
		Type string `xml:"type,attr"`
		Src  string `xml:"src,attr"`
		Body string `xml:",innerxml"`
	}
	xAtomPerson struct {
		Names []string `xml:"http://www.w3.org/2005/Atom name"`
		URIs  []string `xml:"http://www.w3.org/2005/Atom uri"`
	}
	xAtomLink struct {
		Href     string `xml:"href,attr"`
		Rel      string `xml:"rel,attr"`
		Type     string `xml:"type,attr"`
		HrefLang string `xml:"hreflang,attr"`
	}
	xAtomCategory struct {
		Term string `xml:"term,attr"`
	}
	xAtomEntry struct {
		IDs        []string        `xml:"http://www.w3.org/2005/Atom id"`
		Titles     []xAtomText     `xml:"http://www.w3.org/2005/Atom title"`
		Updated    []string        `xml:"http://www.w3.org/2005/Atom updated"`
		Published  []string        `xml:"http://www.w3.org/2005/Atom published"`
		Authors    []xAtomPerson   `xml:"http://www.w3.org/2005/Atom author"`
		Links      []xAtomLink     `xml:"http://www.w3.org/2005/Atom link"`
		Categories []xAtomCategory `xml:"http://www.w3.org/2005/Atom category"`
		Summaries  []xAtomText     `xml:"http://www.w3.org/2005/Atom summary"`
		Contents   []xAtomText     `xml:"http://www.w3.org/2005/Atom content"`
		Sources    []struct{}      `xml:"http://www.w3.org/2005/Atom source"`
	}
	xAtomFeed struct {
		XMLName  xml.Name
		Lang     string        `xml:"http://www.w3.org/XML/1998/namespace lang,attr"`
		IDs      []string      `xml:"http://www.w3.org/2005/Atom id"`
		Titles   []xAtomText   `xml:"http://www.w3.org/2005/Atom title"`
		Updated  []string      `xml:"http://www.w3.org/2005/Atom updated"`
		Authors  []xAtomPerson `xml:"http://www.w3.org/2005/Atom author"`
		Links    []xAtomLink   `xml:"http://www.w3.org/2005/Atom link"`
		Gens     []xAtomText   `xml:"http://www.w3.org/2005/Atom generator"`
		Subtitle []xAtomText   `xml:"http://www.w3.org/2005/Atom subtitle"`
		Entries  []xAtomEntry  `xml:"http://www.w3.org/2005/Atom entry"`
	}
)

// checkAtom checks body against the MUSTs of RFC 4287 that a feed
// document can break, and the SHOULD of a self link, and returns it
// decoded.
func checkAtom(t *testing.T, body []byte) *xAtomFeed {
	t.Helper()
	var f xAtomFeed
	if err := xml.Unmarshal(body, &f); err != nil {
		t.Fatalf("the feed is not XML: %v\n%.500s", err, body)
	}
	errorf := func(format string, args ...any) { t.Helper(); t.Errorf(format, args...) }
	// 4.1.1: the root is atom:feed.
	if f.XMLName.Space != atomNS || f.XMLName.Local != "feed" {
		errorf("root element %v, want atom:feed", f.XMLName)
	}
	iri := func(where, s string) {
		t.Helper()
		u, err := url.Parse(strings.TrimSpace(s))
		if err != nil || !u.IsAbs() {
			errorf("%s: %q is not an absolute IRI (4.2.6)", where, s)
		}
	}
	// 3.3: a Date construct is an RFC 3339 date-time, T and Z upper case.
	date := func(where, s string) {
		t.Helper()
		if _, err := time.Parse(time.RFC3339, s); err != nil || strings.ContainsAny(s, "tz") {
			errorf("%s: %q is not an RFC 3339 date-time (3.3)", where, s)
		}
	}
	// 3.1: a Text construct's type is text, html or xhtml.
	text := func(where string, x xAtomText) {
		t.Helper()
		switch x.Type {
		case "", "text", "html", "xhtml":
		default:
			errorf("%s: type %q (3.1)", where, x.Type)
		}
	}
	// 3.2: a Person construct has exactly one name.
	person := func(where string, p xAtomPerson) {
		t.Helper()
		if len(p.Names) != 1 || strings.TrimSpace(p.Names[0]) == "" {
			errorf("%s: %d names (3.2)", where, len(p.Names))
		}
		for _, u := range p.URIs {
			iri(where+" uri", u)
		}
	}
	// 4.2.7: every link has an href; at most one alternate per type and
	// hreflang.
	links := func(where string, ls []xAtomLink) (alternates int) {
		t.Helper()
		seen := map[string]bool{}
		for _, l := range ls {
			iri(where+" link href", l.Href)
			if l.Rel == "" || l.Rel == "alternate" {
				alternates++
				k := l.Type + "|" + l.HrefLang
				if seen[k] {
					errorf("%s: two alternate links of type %q and hreflang %q (4.1.1)", where, l.Type, l.HrefLang)
				}
				seen[k] = true
			}
		}
		return alternates
	}
	one := func(where, what string, n int) {
		t.Helper()
		if n != 1 {
			errorf("%s: %d %s, want exactly one", where, n, what)
		}
	}

	// 4.1.1: exactly one id, title and updated; authors unless every
	// entry has one; at most one generator and subtitle.
	one("feed", "atom:id", len(f.IDs))
	one("feed", "atom:title", len(f.Titles))
	one("feed", "atom:updated", len(f.Updated))
	if len(f.Gens) > 1 || len(f.Subtitle) > 1 {
		errorf("feed: %d generators, %d subtitles, want at most one", len(f.Gens), len(f.Subtitle))
	}
	for _, id := range f.IDs {
		iri("feed id", id)
	}
	for _, x := range f.Titles {
		text("feed title", x)
	}
	for _, u := range f.Updated {
		date("feed updated", u)
	}
	for _, a := range f.Authors {
		person("feed author", a)
	}
	links("feed", f.Links)
	self := 0
	for _, l := range f.Links {
		if l.Rel == "self" {
			self++
		}
	}
	if self != 1 {
		errorf("feed: %d self links, want one (4.1.1 SHOULD)", self)
	}

	ids := map[string]bool{}
	for i, e := range f.Entries {
		where := "entry " + string(rune('0'+i%10))
		if len(e.IDs) == 1 {
			where = "entry " + e.IDs[0]
		}
		// 4.1.2: exactly one id, title, updated; at most one published,
		// summary, content, source.
		one(where, "atom:id", len(e.IDs))
		one(where, "atom:title", len(e.Titles))
		one(where, "atom:updated", len(e.Updated))
		if len(e.Published) > 1 || len(e.Summaries) > 1 || len(e.Contents) > 1 || len(e.Sources) > 1 {
			errorf("%s: more than one published, summary, content or source", where)
		}
		for _, id := range e.IDs {
			iri(where+" id", id)
			if ids[id] {
				errorf("%s: id used by two entries", where)
			}
			ids[id] = true
		}
		for _, x := range e.Titles {
			text(where+" title", x)
		}
		for _, u := range append(e.Updated, e.Published...) {
			date(where+" date", u)
		}
		// 4.1.2: an author, unless the feed has one.
		if len(f.Authors) == 0 && len(e.Authors) == 0 {
			errorf("%s: no author, and the feed has none", where)
		}
		for _, a := range e.Authors {
			person(where+" author", a)
		}
		// 4.1.2: an alternate link unless there is content.
		if links(where, e.Links) == 0 && len(e.Contents) == 0 {
			errorf("%s: no alternate link and no content", where)
		}
		// 4.1.2: a summary when content has src or is not text.
		for _, c := range e.Contents {
			if c.Src != "" || (c.Type != "" && c.Type != "text" && c.Type != "html" && c.Type != "xhtml" &&
				!strings.HasPrefix(c.Type, "text/") && !strings.HasSuffix(c.Type, "xml")) {
				if len(e.Summaries) == 0 {
					errorf("%s: content with src or of type %q but no summary", where, c.Type)
				}
			}
		}
		for _, x := range e.Summaries {
			text(where+" summary", x)
		}
		for _, c := range e.Categories {
			if c.Term == "" {
				errorf("%s: a category without term (4.2.2)", where)
			}
		}
	}
	return &f
}

// TestAtom_Feed reads the Atom feed of searches through the real router,
// checks it against RFC 4287, and checks that it holds the newest records
// the same search finds, with ids that stay the same per record.
func TestAtom_Feed(t *testing.T) {
	recs := append(lookupRecords(), fullRecord())
	e := newChangesEnv(t, recs)
	get := func(target string, header map[string]string, status int) (*http.Response, []byte) {
		t.Helper()
		return e.request(t, target, header, status)
	}
	for _, query := range []string{"", "lang=fr", "q=kettle&lang=en", "recall_type=vehicle&limit=1", "q=zzqxv"} {
		// No key: feed readers send none.
		resp, body := get("/recall/feed.atom?"+query, nil, http.StatusOK)
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/atom+xml") {
			t.Fatalf("%s: Content-Type %q", query, ct)
		}
		f := checkAtom(t, body)
		var want idPage
		searchQuery := query + "&sort_by=published"
		if !strings.Contains(query, "limit=") {
			searchQuery += "&limit=50"
		}
		if err := json.Unmarshal(e.get(t, "/recall?"+searchQuery, http.StatusOK), &want); err != nil {
			t.Fatal(err)
		}
		if len(f.Entries) != len(want.Results) {
			t.Fatalf("%s: %d entries, GET /recall pages %d", query, len(f.Entries), len(want.Results))
		}
		for i, r := range want.Results {
			if got := f.Entries[i].IDs[0]; got != atomID("recall/"+r.RecordID) {
				t.Errorf("%s: entry %d is %s, want the one of %s", query, i, got, r.RecordID)
			}
		}
		if strings.Contains(query, "lang=fr") && f.Lang != "fr" {
			t.Errorf("%s: xml:lang %q", query, f.Lang)
		}
		self := ""
		for _, l := range f.Links {
			if l.Rel == "self" {
				self = l.Href
			}
		}
		wantSelf := testPublicURL + "/recall/feed.atom"
		if query != "" {
			wantSelf += "?" + query
		}
		if self != wantSelf {
			t.Errorf("%s: self link %q", query, self)
		}
		// Revalidation.
		get("/recall/feed.atom?"+query, map[string]string{"If-None-Match": resp.Header.Get("Etag")}, http.StatusNotModified)
	}
	// The French feed of the kettle has its French title.
	_, body := get("/recall/feed.atom?q=kettle&lang=fr", nil, http.StatusOK)
	if f := checkAtom(t, body); len(f.Entries) != 1 || !bytes.Contains([]byte(f.Entries[0].Titles[0].Body), []byte("Kettle fr")) {
		t.Fatalf("the French kettle feed: %s", body)
	}
	// Same search, same feed id, whatever the order of its parameters.
	_, a := get("/recall/feed.atom?recall_type=vehicle&lang=en", nil, http.StatusOK)
	_, b := get("/recall/feed.atom?lang=en&recall_type=vehicle", nil, http.StatusOK)
	if checkAtom(t, a).IDs[0] != checkAtom(t, b).IDs[0] {
		t.Error("the same search has two feed ids")
	}
}

// testPublicURL is the public URL of the test servers that have one.
const testPublicURL = "https://recalls.example.ca"

// TestAtom_SelfLinkIgnoresHost: the feed is public and cached for a
// refresh period, so its self link never comes from the Host header a
// client writes: it is made under PublicURL, or relative without one.
func TestAtom_SelfLinkIgnoresHost(t *testing.T) {
	recs := lookupRecords()
	for _, public := range []string{testPublicURL, testPublicURL + "/", ""} {
		s, _ := MustServer(t, MustCatalog(t, recs))
		s.PublicURL = public
		base := MustHTTP(t, s.Handler()).URL
		for _, host := range []string{"evil.example", ""} {
			req, err := http.NewRequest("GET", base+"/recall/feed.atom?limit=1", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = host
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("Host %q: status %d: %s", host, resp.StatusCode, body)
			}
			var f xAtomFeed
			if err := xml.Unmarshal(body, &f); err != nil {
				t.Fatal(err)
			}
			want := strings.TrimRight(public, "/") + "/recall/feed.atom?limit=1"
			for _, l := range f.Links {
				if l.Rel == "self" && l.Href != want {
					t.Errorf("PublicURL %q, Host %q: self link %q, want %q", public, host, l.Href, want)
				}
			}
			if host != "" && bytes.Contains(body, []byte(host)) {
				t.Errorf("PublicURL %q: the feed names the Host header %q", public, host)
			}
		}
	}
}
