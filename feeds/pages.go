package feeds

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/rappel-ca/rappel"
	"golang.org/x/net/html"
)

// Which upstream a notice's detail comes from: the old detail API
// (Source.Template, healthycanadians.gc.ca/recall-alert-rappel-avis/api),
// which froze on 2021-10-29, or the notice's recall page on
// recalls-rappels.canada.ca (Source.Page), the only place its products are
// published since November 2021. A notice from Source.PageFrom on tries
// its page first, an older one the API first; either falls back to the
// other when the first has no document in either language, so a notice
// is never left without detail while one of them has it.

// DefaultPageFrom is the first NID whose page is tried before the old
// API: rappel.FirstPageNID.
const DefaultPageFrom = rappel.FirstPageNID

// PageTemplate is the address of a notice's page on site (scheme and host,
// as of the dump's URL): /{lang}/node/{id} answers with a redirect to the
// page in that language.
func PageTemplate(site string) string {
	u, err := url.Parse(site)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host + "/{lang}/node/{id}"
}

// noticeHint is what a fetch of a notice's page knows beforehand: the
// dump's URL of its English page, and what its last fetch stored, for a
// conditional request.
type noticeHint struct {
	url  string
	prev storedPages
}

// storedPages are a notice's stored pages, by language, and the validators
// they were fetched with.
type storedPages struct {
	body  [2][]byte
	state [2]rappel.FileState
}

// pageFirst reports whether notice nid tries its page before the old API.
func (s *Source) pageFirst(nid string) bool {
	n, err := strconv.Atoi(nid)
	return s.Page != "" && (err != nil || n >= s.PageFrom)
}

// fetchPages fetches a notice's English page, at the dump's URL when that
// is on the pages' site, else at the template, and its French page at the
// English page's hreflang alternate (else the template), each
// conditionally on what its last fetch stored. found is false when
// neither exists.
func (r *Refresher) fetchPages(ctx context.Context, src *Source, nid string, tick *limiter, hint noticeHint) (raw rappel.RawRecord, found bool, err error) {
	var docs [2][]byte
	var states [2]rappel.FileState
	site, _ := url.Parse(src.Page)
	for i, lang := range rappel.Langs {
		u := strings.NewReplacer("{id}", nid, "{lang}", lang).Replace(src.Page)
		switch alt := ""; {
		case i == 0 && sameSite(hint.url, site):
			u = hint.url
		case i == 1 && docs[0] != nil:
			if alt = alternate(docs[0], rappel.LangFR); sameSite(alt, site) {
				u = alt
			}
		}
		if err := tick.wait(ctx); err != nil {
			return raw, false, err
		}
		ask := rappel.FileState{}
		if hint.prev.state[i].URL == u && hint.prev.body[i] != nil {
			ask = hint.prev.state[i]
		}
		resp, err := r.Fetcher.Get(ctx, u, ask)
		switch {
		case err != nil:
			return raw, false, fmt.Errorf("fetching the %s recall page of notice %s: %w", lang, nid, err)
		case resp.NotFound:
			continue
		case resp.NotModified:
			docs[i], states[i] = hint.prev.body[i], hint.prev.state[i]
		default:
			if t := bytes.TrimSpace(skipBOM(resp.Body)); len(t) == 0 || t[0] != '<' {
				return raw, false, rappel.Fail(rappel.FailureParse, fmt.Errorf("fetching the %s recall page of notice %s: the page is not HTML: %s", lang, nid, describe(resp.Body)))
			}
			docs[i], states[i] = resp.Body, resp.State
		}
		found = true
	}
	return pageRaw(nid, docs[0], docs[1], states), found, nil
}

// sameSite reports whether u is an absolute address on site's host: the
// only addresses of pages a notice is fetched from, whatever its dump row
// or page names.
func sameSite(u string, site *url.URL) bool {
	p, err := url.Parse(u)
	return u != "" && err == nil && site != nil && (p.Scheme == "https" || p.Scheme == "http") && strings.EqualFold(p.Host, site.Host)
}

// alternate returns the address of page's alternate in lang, its <link
// rel="alternate" hreflang="lang" href>, or "".
func alternate(page []byte, lang string) string {
	z := html.NewTokenizer(bytes.NewReader(page))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			if string(name) == "body" {
				return ""
			}
			if string(name) != "link" || !hasAttr {
				continue
			}
			attrs := map[string]string{}
			for more := true; more; {
				var k, v []byte
				k, v, more = z.TagAttr()
				attrs[string(k)] = string(v)
			}
			if strings.EqualFold(attrs["rel"], "alternate") && attrs["hreflang"] == lang {
				return strings.TrimSpace(attrs["href"])
			}
		}
	}
}

// pageRaw is the raw record of a notice's pages; nil is absent. Beside the
// two languages' lists it frames the validators each page was fetched
// with, for the next conditional request, out of the content hash: a page
// fetched again unchanged is the same raw record.
func pageRaw(nid string, en, fr []byte, states [2]rappel.FileState) rappel.RawRecord {
	raw := detailRaw(nid, en, fr)
	lists, err := rawLists(raw)
	if err != nil {
		return raw
	}
	st, _ := json.Marshal(states)
	raw.Data = pack(frame(append(lists, [][]byte{st})...))
	return raw
}

// storedPagesOf reads a stored raw record of pages back, or returns false
// for one that holds no pages (the old API's documents).
func storedPagesOf(raw rappel.RawRecord) (storedPages, bool) {
	var s storedPages
	lists, err := rawLists(raw)
	if err != nil || len(lists) != 3 || len(lists[2]) != 1 || json.Unmarshal(lists[2][0], &s.state) != nil {
		return s, false
	}
	for i := range 2 {
		for _, doc := range lists[i] {
			if isPage(doc) {
				s.body[i] = doc
			}
		}
	}
	return s, true
}

// isPage reports whether a detail document is a page (HTML), not the old
// API's JSON.
func isPage(doc []byte) bool {
	t := bytes.TrimSpace(skipBOM(doc))
	return len(t) > 0 && t[0] == '<'
}

// pageHints gathers what fetching the pages of nids needs: the English
// URL each notice's dump row gives, and the stored pages of those of old,
// the stored raw index, which have some. Both are read in one pass over
// the source's stored data each, the store reading raw data no other way.
func (r *Refresher) pageHints(ctx context.Context, src *Source, nids []string, old map[string]rappel.RawRecord) (map[string]noticeHint, error) {
	if src.Page == "" || len(nids) == 0 {
		return nil, nil
	}
	want := make(map[string]bool, len(nids))
	for _, nid := range nids {
		want[nid] = true
	}
	hints := map[string]noticeHint{}
	err := r.store().RawData(ctx, src.Follows, func(raw rappel.RawRecord) error {
		if !want[raw.Key] || raw.Data == nil {
			return nil
		}
		if u := dumpURL(raw); u != "" {
			hints[raw.Key] = noticeHint{url: u}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	stored := false
	for _, nid := range nids {
		_, ok := old[nid]
		stored = stored || ok
	}
	if !stored {
		return hints, nil // new notices only: nothing stored to ask again for
	}
	err = r.store().RawData(ctx, src.Name, func(raw rappel.RawRecord) error {
		if want[raw.Key] && raw.Data != nil {
			if s, ok := storedPagesOf(raw); ok {
				h := hints[raw.Key]
				h.prev = s
				hints[raw.Key] = h
			}
		}
		return nil
	})
	return hints, err
}

// dumpURL is the URL of a notice's English page as its dump row gives it,
// or "".
func dumpURL(raw rappel.RawRecord) string {
	lists, err := rawLists(raw)
	if err != nil || len(lists) == 0 {
		return ""
	}
	for _, row := range lists[0] {
		var r struct {
			URL string `json:"URL"`
		}
		if json.Unmarshal(row, &r) == nil && strings.TrimSpace(r.URL) != "" {
			return strings.TrimSpace(r.URL)
		}
	}
	return ""
}

// corpusHints are the page hints of a corpus fetched whole: the English
// URLs of the dump's rows, which it holds in memory.
func corpusHints(src *Source, rows []rappel.RawRecord) map[string]noticeHint {
	if src.Page == "" {
		return nil
	}
	hints := map[string]noticeHint{}
	for _, raw := range rows {
		if u := dumpURL(raw); u != "" {
			hints[raw.Key] = noticeHint{url: u}
		}
	}
	return hints
}
