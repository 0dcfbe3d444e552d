package synth_test

import (
	"html"
	"math"
	"strings"
	"testing"
)

// plain is a dump text as a reader sees it: entities decoded, zero-width
// and runs of spaces as one space, trimmed.
func plain(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(html.UnescapeString(s), "\u200b", " ")), " ")
}

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
	for _, row := range c.dumpEN {
		nid, url, issue, class := *row["NID"], *row["URL"], str(row, "Issue"), str(row, "Recall class")
		twin := fr[nid]
		n["rows"]++
		if row["Category"] != nil && *row["Organization"] != "TC" {
			n["category"]++
			if strings.Contains(*row["Category"], " - ") {
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
		switch org := *row["Organization"]; org {
		case "TC":
			n["tc"]++
			title := plain(*row["Title"])
			rn := strings.Fields(title)[4]
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
			if strings.HasPrefix(issue, "Food - ") {
				n["issue path"]++
			}
			if strings.HasPrefix(issue, "Food - Allergen - ") {
				n["allergen path"]++
				if strings.Contains(issue, ", ") {
					n["several allergens"]++
				}
			}
			if twin != nil {
				n["cfia twin"]++
				if *twin["Organization"] == "ACIA" {
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
		{"Issue paths, of CFIA rows", share(n["issue path"], n["cfia"]), 90, 2},
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
	for _, k := range []string{"several allergens", "class range", "class --", "class ", "class null", "classe", "Communications and Public Affairs Branch"} {
		if n[k] == 0 {
			t.Errorf("no dump row shows %q", k)
		}
	}
}
