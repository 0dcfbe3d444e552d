package synth_test

import (
	"html"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/detail"
	"github.com/rappel-ca/rappel/plugins/hcdump"
)

// plain is a dump text as a reader sees it: entities decoded, zero-width
// and runs of spaces as one space, trimmed.
func plain(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(html.UnescapeString(s), "\u200b", " ")), " ")
}

// glued matches the advice whose paragraphs lost their breaks: a sentence
// glued to the next by its period, or by no separator at all.
var glued = regexp.MustCompile(`\p{Ll}{2}\.\p{Lu}\p{Ll}|\p{Ll}{2}(?:Do|Check|Recalled|If|Stop|Consult|Return|Report|Continue|Speak|Health|Consumers|Contact)\b`)

// TestGenerate_DumpShapes checks that the dump holds every shape its users
// report (testdata/FORMATS.md, Health Canada dump), at the rates the
// generator means to write them.
func TestGenerate_DumpShapes(t *testing.T) {
	c, _ := mustCorpus(t)
	fr := map[string]map[string]*string{}
	for _, row := range c.dumpFR {
		fr[*row["NID"]] = row
	}
	system := map[string]string{}
	for _, r := range c.csvRows {
		system[r[0]] = r[8]
	}
	n := map[string]int{}
	str := func(row map[string]*string, k string) string {
		if v := row[k]; v != nil {
			return *v
		}
		return ""
	}
	// The older vocabulary's organizations, as the newer one names them.
	older := map[string]string{"Canadian Food Inspection Agency": "CFIA", "Transport Canada": "TC", "Health Canada": "Health Canada"}
	for _, row := range c.dumpEN {
		nid, url, issue, class := *row["NID"], *row["URL"], str(row, "Issue"), str(row, "Recall class")
		twin := fr[nid]
		n["rows"]++
		org := *row["Organization"]
		short, ok := older[org]
		is2023 := ok && (*row["Archived"] == "No" || *row["Archived"] == "Yes")
		if is2023 {
			n["2023 rows"]++
			org = short
			if strings.HasPrefix(str(row, "Title"), `"`) && strings.HasSuffix(strings.TrimRight(str(row, "Title"), " \u200b"), `"`) {
				n["2023 quoted title"]++
			}
			if strings.HasPrefix(str(row, "What you should do"), `"`) {
				n["2023 quoted advice"]++
			}
			if row["Product"] != nil && *row["Product"] == "" {
				n["2023 empty product"]++
			}
			if strings.Contains(str(row, "Category"), ", ") && org != "TC" {
				n["2023 joined paths"]++
			}
		}
		if glued.MatchString(str(row, "What you should do")) {
			n["glued advice"]++
		}
		if row["Category"] != nil && org != "TC" {
			n["category"]++
			joiner := " - " // the older vocabulary joins paths with ", "
			if is2023 {
				joiner = ", "
			}
			if strings.Contains(*row["Category"], joiner) {
				n["joined category"]++
			}
		}
		switch {
		case strings.HasPrefix(url, "https://recalls-rappels.canada.ca/"):
			n["site url"]++
		case strings.HasPrefix(url, "/en/node/"):
			n["site url"]++
			n["node url"]++
		case strings.HasPrefix(url, "/en/"):
			n["site url"]++
			n["relative url"]++
		}
		switch class {
		case "--", "":
			n["class "+class]++
		}
		if row["Recall class"] == nil {
			n["class null"]++
		}
		if strings.Contains(class, " - ") {
			n["class range"]++
		}
		if twin != nil && strings.HasPrefix(str(twin, "Classe de rappel"), "Classe ") {
			n["classe"]++
		}
		switch org {
		case "TC":
			n["tc"]++
			title := plain(*row["Title"])
			rn := rappel.TransportRecallNumber(title)
			if !strings.Contains(title, rn+" - ") {
				n["tc without make"]++
			}
			if strings.Contains(url, "rn="+rn) {
				n["tc rn url"]++
			}
			if issue != system[rn] {
				t.Fatalf("TC row %s: Issue %q, but the CSV's system is %q", nid, issue, system[rn])
			}
			if row["Product"] != nil && !strings.Contains(plain(*row["Product"]), " recalled by ") {
				t.Fatalf("TC row %s: Product %q", nid, *row["Product"])
			}
		case "CFIA":
			n["cfia"]++
			if !strings.HasSuffix(strings.TrimSpace(plain(issue)), ".") {
				n["issue labels"]++
				if strings.Contains(issue, " - ") {
					n["several allergens"]++
				}
			}
			if twin != nil {
				n["cfia twin"]++
				if o := *twin["Organization"]; o == "ACIA" || o == "Agence canadienne d'inspection des aliments" {
					n["acia"]++
				}
			}
		default:
			n[org]++
		}
	}
	t.Logf("%v", n)
	for _, s := range []struct {
		name      string
		got, want float64
		tolerance float64
	}{
		{"Issue labels, of CFIA rows", share(n["issue labels"], n["cfia"]), 90, 2},
		{"rows in the 2023 vocabulary, of rows", share(n["2023 rows"], n["rows"]), 100 * 0.12 * 0.87, 1},
		{"quoted titles, of 2023 rows", share(n["2023 quoted title"], n["2023 rows"]), 50, 3},
		{"glued advice, of rows", share(n["glued advice"], n["rows"]), 30 * 0.67, 2},
		{"ACIA, of French CFIA rows", share(n["acia"], n["cfia twin"]), 100, 0},
		{"joined categories, of non-TC rows with a category", share(n["joined category"], n["category"]), 5, 1.5},
		{"relative recalls-site URLs, of them", share(n["relative url"], n["site url"]), 10, 2},
		{"node URLs, of recalls-site URLs", share(n["node url"], n["site url"]), 5, 1.5},
		{"TC titles without a make, of TC rows", share(n["tc without make"], n["tc"]), 5, 1.5},
		{"TC database URLs, of TC rows", share(n["tc rn url"], n["tc"]), 35, 2},
		{"Marketed health products, of rows", share(n["Marketed health products"], n["rows"]), 100 * 0.12 * 9000 / 40146, 0.5},
	} {
		t.Logf("%s: %.2f%% (want %.1f)", s.name, s.got, s.want)
		if math.Abs(s.got-s.want) > s.tolerance {
			t.Errorf("%s: %.1f%%, want %.1f%% ±%.1f", s.name, s.got, s.want, s.tolerance)
		}
	}
	for _, k := range []string{"several allergens", "class range", "class --", "class ", "class null", "classe", "Communications and Public Affairs Branch",
		"2023 quoted advice", "2023 empty product", "2023 joined paths"} {
		if n[k] == 0 {
			t.Errorf("no dump row shows %q", k)
		}
	}
}

// TestGenerate_DumpRoundTrip normalizes the generated dump (both
// vocabularies) and its detail documents with the real normalizers: the
// dump gives no problem, and each notice's advice, glued in the dump on 30%
// of rows, comes out of the dump exactly as its detail document writes it
// (every paragraph break restored, nothing else split).
func TestGenerate_DumpRoundTrip(t *testing.T) {
	c, _ := mustCorpus(t)
	dump, problems := normalize(t, c.dir, "hc", hcdump.Normalize)
	if len(problems) != 0 {
		t.Errorf("%d problems, the first %+v", len(problems), problems[0])
	}
	det, _ := normalize(t, c.dir, "detail", detail.Normalize)
	advice := map[string]*rappel.Translation{}
	for _, r := range det {
		advice[r.RecordID] = r.Translations.EN
	}
	glued := map[string]bool{}
	for _, row := range c.dumpEN {
		if v := row["What you should do"]; v != nil && strings.Contains(*v, ".") && !strings.Contains(plain(*v), ". ") {
			glued["hc-"+*row["NID"]] = true
		}
	}
	n := 0
	for _, r := range dump {
		d := advice[r.RecordID]
		if !glued[r.RecordID] || d == nil || d.WhatToDo == "" || r.Translations.EN == nil {
			continue
		}
		n++
		if got := r.Translations.EN.WhatToDo; got != d.WhatToDo {
			t.Errorf("%s: the dump's glued advice gives\n  %q\nthe detail document says\n  %q", r.RecordID, got, d.WhatToDo)
			break
		}
	}
	t.Logf("%d glued advices restored as their detail documents write them", n)
	if n < 1000 {
		t.Errorf("only %d glued advices compared", n)
	}
}
