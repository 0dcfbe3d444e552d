package hcdump

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel/plugins/guest"
	"github.com/rappel-ca/rappel/plugins/guest/guesttest"
)

func TestUnquote(t *testing.T) {
	for in, want := range map[string]string{
		`"Unauthorized sexual enhancement products may pose serious health risks"`: "Unauthorized sexual enhancement products may pose serious health risks",
		`"Stop using the product.`:      "Stop using the product.",
		`"Festin Soft Cheese" recalled`: `"Festin Soft Cheese" recalled`,
		`Brand "X" cookies`:             `Brand "X" cookies`,
		`"A" and "B"`:                   `"A" and "B"`,
		`"`:                             `"`,
		`""`:                            ``,
		"Plain":                         "Plain",
	} {
		if got := unquote(in); got != want {
			t.Errorf("unquote(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRestoreParagraphs(t *testing.T) {
	for in, want := range map[string]string{
		// Glued after a lower-case word, and after a period.
		"Check to see if you have recalled productsDo not consume recalled products": "Check to see if you have recalled products. Do not consume recalled products",
		"check with your pharmacy.Consult a health care professional":                "check with your pharmacy. Consult a health care professional",
		"at bcory@regxia.com.Report any side effects":                                "at bcory@regxia.com. Report any side effects",
		"Monday to Friday, 9 a.m. to 5 p.m.Please have your lot number":              "Monday to Friday, 9 a.m. to 5 p.m. Please have your lot number",
		"if you have a reaction).If you":                                             "if you have a reaction). If you",
		"Ne consommez pas les produits rappelés.Vérifiez si vous":                    "Ne consommez pas les produits rappelés. Vérifiez si vous",
		"les produits rappelésVérifiez si vous":                                      "les produits rappelés. Vérifiez si vous",
		"Stay safe with pools. Buying a pool? Read the guideslinksBuying a pool":     "Stay safe with pools. Buying a pool? Read the guideslinks. Buying a pool",
		// Names and other capitals inside words are left alone.
		"Buy it on eBay or in the iPhone app, McCain fries at McDonald's, a PowerBook": "",
		"Contact SharkNinja or DeckWise. Check the MassCheck unit":                     "",
		"Visit www.Canada.ca or www.MideaUrecall.expertinquiry.com":                    "",
		"From 8 A.M to 5 P.M, in the U.S, an I.V pole":                                 "",
		"Learn more at YouTube.":                                                       "",
		"the productsSomething else":                                                   "", // not a sentence start
	} {
		if want == "" {
			want = in
		}
		if got, _ := restoreParagraphs(in); got != want {
			t.Errorf("restoreParagraphs(%q)\n  = %q\nwant %q", in, got, want)
		}
	}
}

// TestRestoreParagraphs_Real runs the glue rule over every text of Health
// Canada's real dump: in the advice it restores the paragraph breaks the
// dump lost, and nowhere does it split a name that the file itself writes
// with a capital inside (its titles' and products' "SharkNinja",
// "DeckWise", "iQ"); titles, products and Issues, which have no
// paragraphs, are left as they are.
func TestRestoreParagraphs_Real(t *testing.T) {
	var rows []map[string]string
	if err := json.Unmarshal(guesttest.RealSample(t, "hc-dump-en-2025-06.json"), &rows); err != nil {
		t.Fatal(err)
	}
	text := func(row map[string]string, key string) string { return unquote(guest.CleanText(row[key])) }
	mixed := regexp.MustCompile(`\p{L}*\p{Ll}\p{Lu}\p{L}*`)
	names := map[string]bool{}
	for _, row := range rows {
		for _, key := range []string{"Title", "Product"} {
			for _, name := range mixed.FindAllString(text(row, key), -1) {
				names[name] = true
			}
		}
	}
	restored := map[string]int{}
	example := false
	for _, row := range rows {
		for _, key := range []string{"Title", "Product", "Issue", "What you should do"} {
			s := text(row, key)
			for _, at := range gluePoints(s) {
				restored[key]++
				for name := range names {
					for _, loc := range indexAll(s, name) {
						if at > loc && at < loc+len(name) {
							t.Errorf("NID %s: %s is split at %q, inside the name %q", row["NID"], key, s[max(0, at-20):min(len(s), at+20)], name)
						}
					}
				}
			}
			if got, _ := restoreParagraphs(s); strings.Contains(got, "recalled products. Do not consume") {
				example = true
			}
		}
	}
	t.Logf("glue points restored: %v, over %d mixed-case names in titles and products", restored, len(names))
	if restored["Title"]+restored["Product"]+restored["Issue"] != 0 {
		t.Errorf("glue points in titles, products or Issues: %v; they have no paragraphs", restored)
	}
	if restored["What you should do"] != wantRealGluePoints || !example {
		t.Errorf("%d glue points restored in the advice, want %d; \"productsDo\" restored: %v", restored["What you should do"], wantRealGluePoints, example)
	}
}

// wantRealGluePoints is the number of glue points of the real dump's
// advice, counted when the rule was written; each was read.
const wantRealGluePoints = 1334

// FuzzRestoreParagraphs: whatever the advice holds, restoring its breaks
// only inserts ". " or " " at its glue points (taking them out gives the
// text back), and leaves nothing more to restore.
func FuzzRestoreParagraphs(f *testing.F) {
	f.Add("Check to see if you have recalled productsDo not consume recalled products")
	f.Add("your pharmacy.Consult a health care professional, at 5 p.m.Please call (eBay, iPhone).If")
	f.Add("les produits rappelésVérifiez si vous avez. www.Canada.ca McCain SharkNinja")
	f.Add("end.Foo and barFoo")
	f.Fuzz(func(t *testing.T, s string) {
		got, n := restoreParagraphs(s)
		points := gluePoints(s)
		if n != len(points) {
			t.Fatalf("restoreParagraphs(%q) counts %d points, gluePoints finds %d", s, n, len(points))
		}
		var back strings.Builder
		last, shift := 0, 0
		for _, at := range points {
			sep := ". "
			if s[at-1] == '.' {
				sep = " "
			}
			pos := at + shift
			if !strings.HasPrefix(got[pos:], sep) {
				t.Fatalf("restoreParagraphs(%q) = %q: no %q at %d", s, got, sep, pos)
			}
			back.WriteString(got[last:pos])
			last, shift = pos+len(sep), shift+len(sep)
		}
		back.WriteString(got[last:])
		if back.String() != s {
			t.Fatalf("restoreParagraphs(%q) = %q, which is not the text with breaks inserted", s, got)
		}
		if again, m := restoreParagraphs(got); m != 0 || again != got {
			t.Fatalf("restoreParagraphs(%q) = %q, which has %d glue points left", s, got, m)
		}
	})
}
