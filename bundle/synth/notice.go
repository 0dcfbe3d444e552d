package synth

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"
)

// output is what one plan entry adds to the corpus. The detail documents
// are written by the worker that built them; the rest is appended to the
// shared files in plan order.
type output struct {
	dumpEN, dumpFR []byte // JSON objects, nil when the notice has no row
	csv            []byte // VRDB rows
	csvRows        int
	docEN, docFR   []byte // detail documents, nil when absent
	ext            string // their name's ending: .json (the old API's) or .html (recall pages)
	layout         pageLayout
	nid            string
}

// notice assembles the dump rows and detail documents of one Health Canada
// notice (any type but vehicle).
func (g *generator) notice(e *entry) output {
	out, _ := g.noticeDoc(e)
	return out
}

// noticeDoc is notice, and the detail document the notice's detail is
// written from (nil when it has none).
func (g *generator) noticeDoc(e *entry) (output, *document) {
	p := profiles[e.typ]
	r := newRand(g.seed, e.key)
	var s subject
	if e.update {
		// An updated notice is about the same thing as the one it updates:
		// rebuild that one's subject from its own stream.
		s = p.subject(newRand(g.seed, e.origKey))
	} else {
		s = p.subject(r)
	}
	company := firm(r, s.brand)
	nid := strconv.FormatInt(e.nid, 10)

	var titleEN, titleFR string
	if e.typ == typeFood {
		titleEN = fmt.Sprintf("%s brand %s recalled due to %s", s.brand, s.item.en, s.hazard.titleEN)
		titleFR = fmt.Sprintf("%s de marque %s %s en raison %s", s.item.fr, s.brand, s.item.agree("rappelé"), s.hazard.titleFR)
	} else {
		titleEN = fmt.Sprintf("%s %s recalled due to %s", s.brand, s.item.en, s.hazard.titleEN)
		titleFR = fmt.Sprintf("%s %s %s en raison %s", s.item.fr, s.brand, s.item.agree("rappelé"), s.hazard.titleFR)
	}
	if e.update {
		titleEN, titleFR = "Updated: "+titleEN, "Mise à jour\u00a0: "+titleFR
	}
	urlEN, urlFR := noticeURLs(e, nid, titleEN, titleFR)
	whatEN, whatFR := whatToDo(r, e.typ, s, company)

	published := min(e.day+day(pickWeighted(r, []int{80, 20})), g.ref)
	startUnix := unixAt(r, e.day)
	publishedUnix := max(unixAt(r, published), startUnix)

	// Last updated: null on ~41% of rows, only where a detail document gives
	// the dates; otherwise the date the notice was last touched.
	var lastUpdated field
	switch {
	case !e.hasDetail:
		lastUpdated = field{v: g.stamp(r, e.day)}
	case chance(r, nullLastUpdated):
		lastUpdated = field{null: true}
	case chance(r, 0.6):
		lastUpdated = field{v: g.stamp(r, published)}
	default:
		lastUpdated = field{v: g.stamp(r, min(published+day(between(r, 1, 365)), g.ref))}
	}

	org := p.org
	hasCategory := chance(r, categoryShare)
	switch {
	case e.typ == typeCannabis && chance(r, 0.1):
		// Some cannabis rows name no known organization; the normalizer
		// falls back on their Category, so they always have one.
		org, hasCategory = "Health Canada", true
	case e.typ == typeHealth && chance(r, marketedShare):
		org = orgMarketed
	case (e.typ == typeHealth || e.typ == typeMedical) && chance(r, cpabShare):
		org = orgCPAB
	}
	catEN, catFR := s.catEN, s.catFR
	switch {
	case org == orgCPAB && e.typ == typeMedical:
		// The branch files advisories of every kind: its device notices
		// say so in their Category, which is how the normalizer tells.
		catEN, catFR, hasCategory = "Medical devices - "+catEN, "Instruments médicaux - "+catFR, true
	case org != orgCPAB && hasCategory && chance(r, joinedShare):
		if c, ok := secondCategory(r, e.typ, s.catEN); ok {
			catEN, catFR = catEN+" - "+c[0], catFR+" - "+c[1]
			s.alsoEN, s.alsoFR = c[0], c[1]
		}
	}
	issueEN, issueFR := s.hazard.issueEN, s.hazard.issueFR
	if e.typ == typeFood {
		issueEN, issueFR = foodIssue(r, s.hazard)
	}
	class := recallClass(r, p)
	var row dumpRow
	row[colNID] = field{v: nid}
	row[colTitle] = field{v: quirkTitle(r, titleEN)}
	row[colURL] = field{v: urlForm(r, urlEN, "en", nid)}
	row[colOrganization] = field{v: org}
	row[colProduct] = field{v: s.item.en, null: chance(r, nullProduct)}
	row[colIssue] = field{v: quirkText(r, issueEN)}
	row[colWhat] = field{v: quirkText(r, whatEN)}
	row[colCategory] = field{v: catEN, null: !hasCategory}
	row[colClass] = class
	row[colLastUpdated] = lastUpdated
	row[colArchived] = field{v: g.archived(r, e.day)}

	// The older vocabulary types a Health Canada notice by its Category:
	// only its own organization's rows with one are written in it.
	st := g.style(e, org == p.org && (hasCategory || org == "CFIA"))
	base := row
	st.write(&row, e.typ, 0)
	out := output{nid: nid}
	out.dumpEN = row.appendJSON(nil, dumpKeysEN)
	if e.hasFR {
		row = base
		row[colTitle].v = quirkTitle(r, titleFR)
		row[colURL].v = urlForm(r, urlFR, "fr", nid)
		if org == "CFIA" {
			row[colOrganization].v = "ACIA" // the one name the French file translates
		}
		row[colProduct].v = s.item.fr
		row[colIssue].v = quirkText(r, issueFR)
		row[colWhat].v = quirkText(r, whatFR)
		row[colCategory].v = catFR
		row[colClass] = frenchClass(class)
		st.write(&row, e.typ, 1)
		out.dumpFR = row.appendJSON(nil, dumpKeysFR)
	}
	if !e.hasDetail {
		return out, nil
	}

	recallID := nid
	if e.update {
		recallID = strconv.FormatInt(e.origNID, 10)
	}
	d := g.document(r, e, p, s, company)
	var write func([]byte, bool) []byte
	d.recallID, d.start, d.published = recallID, startUnix, publishedUnix
	d.urlEN, d.urlFR, d.titleEN, d.titleFR = urlEN, urlFR, titleEN, titleFR
	d.whatEN, d.whatFR = whatEN, whatFR
	if e.update {
		d.alert = "Updated food recall warning"
		if e.typ != typeFood {
			d.alert = "Recall"
		}
	}
	d.page = pageView{issueEN: p.topEN, issueFR: p.topFR, itemEN: s.item.en, itemFR: s.item.fr, agencyEN: "Health Canada", agencyFR: "Santé Canada", archived: base[colArchived].v == "1"}
	if e.typ == typeFood {
		d.page.issueEN, d.page.issueFR = issueEN, issueFR
	}
	if org == "CFIA" {
		d.page.agencyEN, d.page.agencyFR = "Canadian Food Inspection Agency", "Agence canadienne d'inspection des aliments"
	}
	if c := base[colClass]; !c.null {
		d.page.class = pageClass(c.v)
	}
	if !lastUpdated.null && len(lastUpdated.v) >= 10 {
		d.page.lastUpdated = lastUpdated.v[:10]
	}
	g.drawPage(e, d)
	write, out.ext = d.appendJSON, ".json"
	if d.isPage() {
		write, out.ext = d.appendPage, pageExt
		out.layout = d.page.layout
	}
	out.docEN = write(nil, false)
	if e.hasFR {
		out.docFR = write(nil, true)
	}
	return out, d
}

// Upstream shares the dump rows follow (testdata/FORMATS.md).
const (
	categoryShare = 0.75 // Category non-null
	nullProduct   = 0.05 // Product null
	// nullLastUpdated applies to rows with a detail document (97% of
	// non-TC rows): 0.41 / 0.97 of them, so ~41% of all non-TC rows.
	nullLastUpdated = 0.41 / detailShare
	detailShare     = 0.97 // non-TC notices with a detail document
	frenchShare     = 0.89 // dump rows with a French twin
	dumpTCShare     = 0.94 // vehicle recalls with a TC row in the dump
)

// noticeURLs returns a notice's English and French addresses: the recalls
// site's slugs since 2021, the old Healthy Canadians pages before.
func noticeURLs(e *entry, nid, titleEN, titleFR string) (string, string) {
	y := e.day.year()
	if y >= 2021 {
		return "https://recalls-rappels.canada.ca/en/alert-recall/" + slug(titleEN),
			"https://recalls-rappels.canada.ca/fr/avis-rappel/" + slug(titleFR)
	}
	dir := "hc-sc"
	if e.typ == typeFood {
		dir = "inspection"
	}
	base := fmt.Sprintf("https://healthycanadians.gc.ca/recall-alert-rappel-avis/%s/%d/%sr", dir, y, nid)
	return base + "-eng.php", base + "-fra.php"
}

// unixAt returns a Unix time during the Eastern business day of d. Noon to
// 18:00 UTC is the same calendar day in UTC and in every Canadian time zone,
// so the date survives whichever zone a reader converts with.
func unixAt(r *rand.Rand, d day) int64 {
	return d.time().Add(12*time.Hour + time.Duration(r.IntN(360))*time.Minute).Unix()
}

// stamp writes a Last updated value for d: mostly YYYY-MM-DD, sometimes
// with a time of day.
func (g *generator) stamp(r *rand.Rand, d day) string {
	if chance(r, 0.1) {
		return fmt.Sprintf("%s %02d:%02d:%02d", d, 8+r.IntN(10), r.IntN(60), r.IntN(60))
	}
	return d.String()
}

// archived returns the Archived value of a notice from d: most notices
// older than two years are archived.
func (g *generator) archived(r *rand.Rand, d day) string {
	if g.ref-d > 730 && chance(r, 0.85) {
		return "1"
	}
	return "0"
}
