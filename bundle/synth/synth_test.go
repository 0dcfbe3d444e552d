package synth_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/bundle/synth"
)

// targets are FORMATS.md's records per recall type at scale 1.
var targets = map[string]int{
	rappel.TypeFood: 9000, rappel.TypeVehicle: 14000, rappel.TypeHealthProduct: 9000,
	rappel.TypeConsumerProduct: 5500, rappel.TypeMedicalDevice: 3000, rappel.TypeCannabis: 500,
}

// hashTree returns the SHA-256 of every file under dir, by relative path.
func hashTree(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out[rel] = sha256.Sum256(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestGenerate_Determinism(t *testing.T) {
	// A small corpus: the file system, not the generator, sets the pace.
	cfg := synth.Config{Seed: 42, ReferenceDate: refDate, Scale: 0.03}
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	for _, dir := range []string{a, b} {
		if _, err := synth.Generate(dir, cfg); err != nil {
			t.Fatal(err)
		}
	}
	ha, hb := hashTree(t, a), hashTree(t, b)
	if len(ha) < 1000 {
		t.Fatalf("only %d files at scale 0.03", len(ha))
	}
	if !maps.Equal(ha, hb) {
		t.Fatal("two runs with the same Config differ")
	}

	t.Run("SameDirTwice", func(t *testing.T) {
		// A second run into a used directory replaces the old corpus, even
		// a larger one, rather than leave its stray documents behind.
		if _, err := synth.Generate(c, synth.Config{Seed: 42, ReferenceDate: refDate, Scale: 0.06}); err != nil {
			t.Fatal(err)
		}
		if _, err := synth.Generate(c, cfg); err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(ha, hashTree(t, c)) {
			t.Fatal("regenerating into a used directory differs from a fresh run")
		}
	})

	t.Run("ForeignDir", func(t *testing.T) {
		// A directory with an hc/ of someone else's (testdata/, say) is
		// left alone.
		d := t.TempDir()
		keep := filepath.Join(d, "hc", "sample.json")
		if err := os.MkdirAll(filepath.Dir(keep), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(keep, []byte("[]"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := synth.Generate(d, cfg); err == nil {
			t.Error("Generate wrote into a directory holding a foreign hc/")
		}
		if _, err := os.Stat(keep); err != nil {
			t.Errorf("the foreign file is gone: %v", err)
		}
	})

	t.Run("OtherSeed", func(t *testing.T) {
		d := t.TempDir()
		if _, err := synth.Generate(d, synth.Config{Seed: 43, ReferenceDate: refDate, Scale: 0.03}); err != nil {
			t.Fatal(err)
		}
		hd := hashTree(t, d)
		for _, f := range []string{"hc/recalls-en.json", "hc/recalls-fr.json", "tc/vrdb.csv"} {
			if hd[f] == ha[f] {
				t.Errorf("%s is the same with another seed", f)
			}
		}
	})
}

func TestGenerate_Config(t *testing.T) {
	for _, cfg := range []synth.Config{
		{Scale: -1},
		{Scale: math.NaN()},
		{ReferenceDate: time.Date(1991, 6, 1, 0, 0, 0, 0, time.UTC)},
	} {
		if _, err := synth.Generate(t.TempDir(), cfg); err == nil {
			t.Errorf("Generate(%+v) succeeded", cfg)
		}
	}
	m, err := synth.Generate(t.TempDir(), synth.Config{Scale: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if m.Seed != 1 || m.ReferenceDate != time.Now().UTC().Format(time.DateOnly) {
		t.Errorf("defaults: seed %d, reference date %s; want 1 and today", m.Seed, m.ReferenceDate)
	}
}

func TestGenerate_Dumps(t *testing.T) {
	c, _ := mustCorpus(t)
	keysEN := []string{"NID", "Title", "URL", "Organization", "Product", "Issue", "What you should do", "Category", "Recall class", "Last updated", "Archived"}
	keysFR := []string{"NID", "Titre", "URL", "Organization", "Produit", "Problème", "Ce que vous devriez faire", "Catégorie", "Classe de rappel", "Dernière mise à jour", "Archivé"}
	slices.Sort(keysEN)
	slices.Sort(keysFR)
	digits := regexp.MustCompile(`^\d+$`)
	nids := map[string]bool{}
	for _, f := range []struct {
		name string
		rows []map[string]*string
		keys []string
		url  string
	}{{"en", c.dumpEN, keysEN, "Title"}, {"fr", c.dumpFR, keysFR, "Titre"}} {
		seen := map[string]bool{}
		for i, row := range f.rows {
			if got := slices.Sorted(maps.Keys(row)); !slices.Equal(got, f.keys) {
				t.Fatalf("%s row %d has keys %q, want %q", f.name, i, got, f.keys)
			}
			nid := row["NID"]
			if nid == nil || !digits.MatchString(*nid) || seen[*nid] {
				t.Fatalf("%s row %d: NID %v is not a new number", f.name, i, nid)
			}
			seen[*nid] = true
			if f.name == "en" {
				nids[*nid] = true
			} else if !nids[*nid] {
				t.Fatalf("French row %s has no English twin", *nid)
			}
			for _, k := range []string{f.url, "URL", "Organization", "Archived", "Archivé"} {
				if v, ok := row[k]; ok && (v == nil || strings.TrimSpace(*v) == "") {
					t.Fatalf("%s row %s: %s is empty", f.name, *nid, k)
				}
			}
			for _, k := range []string{"Last updated", "Dernière mise à jour"} {
				if v := row[k]; v != nil {
					if _, err := time.Parse(time.DateOnly, (*v)[:min(10, len(*v))]); err != nil {
						t.Fatalf("%s row %s: %s %q is not a date", f.name, *nid, k, *v)
					}
				}
			}
		}
	}
	// TC rows point at recalls the CSV has.
	recalls := map[string]bool{}
	for _, r := range c.csvRows {
		recalls[r[0]] = true
	}
	title := regexp.MustCompile(`^Transport Canada Recall - (\d+)( - [A-Z][A-Z0-9 &'.-]*)?$`)
	for _, row := range c.dumpEN {
		if !isTC(row) {
			continue
		}
		// The older vocabulary wraps some titles in literal quotes.
		m := title.FindStringSubmatch(strings.Trim(plain(*row["Title"]), `" `))
		if m == nil || !recalls[m[1]] || rappel.TransportRecallNumber(*row["URL"], *row["Title"]) != m[1] {
			t.Fatalf("TC row %s: title %q and URL %s name no recall of the CSV", *row["NID"], *row["Title"], *row["URL"])
		}
		if row["What you should do"] != nil {
			t.Fatalf("TC row %s has a What you should do", *row["NID"])
		}
	}
}

func TestGenerate_VRDB(t *testing.T) {
	c, _ := mustCorpus(t)
	header := `"RECALL_NUMBER_NUM","YEAR","MANUFACTURER_RECALL_NO_TXT","CATEGORY_ETXT","CATEGORY_FTXT","MAKE_NAME_NM","MODEL_NAME_NM","UNIT_AFFECTED_NBR","SYSTEM_TYPE_ETXT","SYSTEM_TYPE_FTXT","NOTIFICATION_TYPE_ETXT","NOTIFICATION_TYPE_FTXT","COMMENT_ETXT","COMMENT_FTXT","RECALL_DATE_DTE","LAST_UPDATE_DATE","MANUFACTURER_NAME_NM"` + "\n"
	if !bytes.HasPrefix(c.csvRaw, []byte(header)) {
		t.Fatalf("the CSV does not start with the header %q (and no byte-order mark)", header)
	}
	if n, err := dailyRecords(c.csvRaw); err != nil {
		t.Fatal(err)
	} else if n != len(c.csvRows)+1 {
		t.Fatalf("%d records, %d CSV rows", n, len(c.csvRows)+1)
	}

	ref := refDate.Format(time.DateOnly)
	units := regexp.MustCompile(`^[1-9]\d{0,2}(,\d{3})*\.00$`)
	byRecall := map[string][]string{}
	var multiLine, otherMaker int
	for i, r := range c.csvRows {
		if len(r) != 17 {
			t.Fatalf("row %d has %d fields", i, len(r))
		}
		date, err := time.Parse(time.DateOnly, r[14])
		if err != nil {
			t.Fatalf("row %d: RECALL_DATE_DTE %q", i, r[14])
		}
		if r[15] < r[14] || r[15] > ref || !rappel.ValidDate(r[15]) {
			t.Fatalf("row %d: LAST_UPDATE_DATE %q for a recall of %s", i, r[15], r[14])
		}
		n, err := strconv.Atoi(r[0])
		if err != nil || len(r[0]) != 7 || n/1000 != date.Year() {
			t.Fatalf("row %d: RECALL_NUMBER_NUM %q is not YYYYNNN of %s", i, r[0], r[14])
		}
		year, err := strconv.Atoi(r[1])
		if err != nil || year > date.Year()+1 || year < date.Year()-16 {
			t.Fatalf("row %d: YEAR %q for a recall of %d", i, r[1], date.Year())
		}
		if !units.MatchString(r[7]) {
			t.Fatalf("row %d: UNIT_AFFECTED_NBR %q is not written like \"40,915.00\"", i, r[7])
		}
		for _, f := range []int{5, 6, 16} {
			if r[f] == "" || strings.ToUpper(r[f]) != r[f] {
				t.Fatalf("row %d: make %q, model %q, manufacturer %q are not upper case", i, r[5], r[6], r[16])
			}
		}
		if strings.Contains(r[12], "\n") && strings.Contains(r[13], "\n") {
			multiLine++
		}
		if r[5] != r[16] {
			otherMaker++
		}
		level := append([]string{r[2]}, r[5], r[7], r[8], r[9], r[10], r[11], r[12], r[13], r[14], r[15], r[16])
		if prev, ok := byRecall[r[0]]; ok && !slices.Equal(prev, level) {
			t.Fatalf("recall %s: recall-level columns differ between rows", r[0])
		}
		byRecall[r[0]] = level
	}
	if len(byRecall) != targets[rappel.TypeVehicle] {
		t.Errorf("%d recalls in the CSV, want %d", len(byRecall), targets[rappel.TypeVehicle])
	}
	t.Logf("%d rows: %.1f%% with line breaks in both comments, %.1f%% whose make is not the manufacturer",
		len(c.csvRows), share(multiLine, len(c.csvRows)), share(otherMaker, len(c.csvRows)))
	if share(multiLine, len(c.csvRows)) < 20 || share(otherMaker, len(c.csvRows)) < 20 || share(otherMaker, len(c.csvRows)) > 50 {
		t.Error("want comments with line breaks on a fifth of rows or more, and a make other than the manufacturer on 20% to 50%")
	}
}

// dailyRecords checks that the CSV is quoted as Transport Canada's daily
// extract is: YEAR an unquoted integer, UNIT_AFFECTED_NBR unquoted when it
// has no thousands separator ("11.00"), an empty field unquoted, every other
// field double-quoted, each record ended by LF; and returns the number of
// records.
func dailyRecords(b []byte) (int, error) {
	n, col, i := 0, 0, 0
	for i < len(b) {
		if i < len(b) && b[i] == '"' {
			i++
			for {
				j := bytes.IndexByte(b[i:], '"')
				if j < 0 {
					return n, errorf("record %d: unterminated field", n+1)
				}
				i += j + 1
				if i < len(b) && b[i] == '"' {
					i++
					continue
				}
				break
			}
		} else {
			j := i
			for j < len(b) && b[j] != ',' && b[j] != '\n' {
				j++
			}
			year, units := n > 0 && col == 1, n > 0 && col == 7
			if f := string(b[i:j]); f != "" && !(year && strings.Trim(f, "0123456789") == "" || units && strings.Trim(f, "0123456789.") == "") {
				return n, errorf("record %d, field %d: %q is unquoted, and not the YEAR or a count below 1,000", n+1, col+1, f)
			}
			i = j
		}
		switch {
		case i < len(b) && b[i] == ',':
			i++
			col++
		case i < len(b) && b[i] == '\n':
			i++
			n++
			col = 0
		default:
			return n, errorf("record %d: byte %d after a field is neither a comma nor LF", n+1, i)
		}
	}
	return n, nil
}

func TestGenerate_Documents(t *testing.T) {
	c, _ := mustCorpus(t)
	rows := map[string]map[string]*string{}
	for _, row := range c.dumpEN {
		rows[*row["NID"]] = row
	}
	productPanel := regexp.MustCompile(`^product_[1-9]\d*$`)
	updates := 0
	for nid, d := range c.docsEN {
		row, ok := rows[nid]
		if !ok || isTC(row) {
			t.Fatalf("document %s has no non-TC dump row", nid)
		}
		if d.RecallID != nid {
			updates++
			if other, ok := rows[d.RecallID]; !ok || isTC(other) || len(d.RecallID) > len(nid) || d.RecallID >= nid && len(d.RecallID) == len(nid) {
				t.Fatalf("document %s updates %s, which is no older notice", nid, d.RecallID)
			}
		}
		if d.StartDate <= 0 || d.DatePublished < d.StartDate || d.Title == "" || !strings.HasPrefix(d.URL, "https://") {
			t.Fatalf("document %s: start %d, published %d, title %q, url %q", nid, d.StartDate, d.DatePublished, d.Title, d.URL)
		}
		want := []string{"summary", "basic_details", "cms_issue_problem", "cms_who_what_consumer"}
		if d.legacy() {
			want = []string{"summary", "details", "what_to_do"}
		}
		for _, p := range want {
			if text, ok := d.panel(p); !ok || text == "" {
				t.Fatalf("document %s has no %s panel", nid, p)
			}
		}
		for _, p := range d.Panels {
			switch {
			case p.PanelName == "images" && d.legacy():
				var imgs []struct{ URL, Title string }
				if err := json.Unmarshal(p.Data, &imgs); err != nil || len(imgs) == 0 {
					t.Fatalf("document %s: images data %s", nid, p.Data)
				}
			case p.PanelName == "images":
				// The API's images are paths on the site, with a thumbnail.
				var imgs []struct{ FullURL, ThumbURL, Title string }
				if err := json.Unmarshal(p.Data, &imgs); err != nil || len(imgs) == 0 || !strings.HasPrefix(imgs[0].FullURL, "/") || !strings.HasPrefix(imgs[0].ThumbURL, "/") {
					t.Fatalf("document %s: images data %s", nid, p.Data)
				}
			case slices.Contains(want, p.PanelName), productPanel.MatchString(p.PanelName):
			case !d.legacy() && slices.Contains([]string{"cms_product_details_background", "id_numbers", "media_enquiries", "public_enquiries"}, p.PanelName):
			default:
				t.Fatalf("document %s has a panel %q", nid, p.PanelName)
			}
		}
		if fr, ok := c.docsFR[nid]; ok && (fr.RecallID != d.RecallID || fr.StartDate != d.StartDate || fr.Title == d.Title) {
			t.Fatalf("French document %s does not match the English one", nid)
		}
	}
	for nid := range c.docsFR {
		if c.docsEN[nid] == nil {
			t.Fatalf("French document %s has no English one", nid)
		}
	}
	if updates == 0 {
		t.Error("no updated notices")
	}
}

func TestGenerate_UPCs(t *testing.T) {
	c, _ := mustCorpus(t)
	line := regexp.MustCompile(`<b>(?:UPC|CUP):</b> ([^<]*)<BR/>`)
	prefix := regexp.MustCompile(`^(?:Starting with|Commençant par) (02\d{5})$`)
	noCheck := regexp.MustCompile(`^02\d{5} 00000$`)
	forms := map[int]int{}
	var prefixes, inStore, withoutCheck int
	for name, b := range c.docBytes {
		for _, m := range line.FindAllSubmatch(b, -1) {
			code := string(m[1])
			switch {
			case code == "None":
				continue
			case prefix.MatchString(code):
				prefixes++
				continue
			case noCheck.MatchString(code):
				// An in-store code printed without its check digit.
				if _, err := rappel.ParseGTIN(code); err == nil {
					t.Fatalf("%s: in-store code %q is a valid barcode", name, code)
				}
				withoutCheck++
				continue
			}
			if len(code) == 11 {
				// A UPC-A printed without its leading 0, as CFIA does.
				if _, err := rappel.ParseGTIN(code); err != nil {
					t.Fatalf("%s: 11-digit UPC %q is no UPC-A without its 0: %v", name, code, err)
				}
				forms[11]++
				continue
			}
			if _, err := rappel.ParseGTIN(code); err != nil {
				t.Fatalf("%s: UPC %q: %v", name, code, err)
			}
			if strings.HasPrefix(code, "02") && len(code) == 13 {
				inStore++
			}
			forms[len(code)]++
		}
	}
	// Spaced UPC-A (15 characters), bare UPC-A (12), spaced and bare EAN-13,
	// UPC-A without its 0 (11).
	for _, n := range []int{15, 12, 15, 13, 11} {
		if forms[n] == 0 {
			t.Errorf("no UPC printed with %d characters: %v", n, forms)
		}
	}
	t.Logf("in-store codes: %d prefixes, %d whole codes, %d without a check digit", prefixes, inStore, withoutCheck)
	if prefixes == 0 || inStore == 0 || withoutCheck == 0 || prefixes < inStore || inStore < withoutCheck {
		t.Errorf("in-store codes: %d prefixes, %d whole codes, %d without a check digit; want all, in that order of frequency", prefixes, inStore, withoutCheck)
	}
}

func TestGenerate_Counts(t *testing.T) {
	c, m := mustCorpus(t)
	orgs := map[string]string{
		"CFIA": rappel.TypeFood, "Drugs and health products": rappel.TypeHealthProduct,
		"Consumer product safety": rappel.TypeConsumerProduct, "Medical devices": rappel.TypeMedicalDevice,
		"Controlled substances and cannabis": rappel.TypeCannabis,
	}
	got := map[string]int{}
	for _, row := range c.dumpEN {
		switch org := organization(row); {
		case org == "TC":
		case orgs[org] != "":
			got[orgs[org]]++
		case org == "Marketed health products":
			got[rappel.TypeHealthProduct]++
		case org == "Communications and Public Affairs Branch" && row["Category"] != nil && strings.HasPrefix(*row["Category"], "Medical devices - "):
			got[rappel.TypeMedicalDevice]++
		case org == "Communications and Public Affairs Branch":
			got[rappel.TypeHealthProduct]++
		case row["Category"] != nil && *row["Category"] == "Cannabis":
			got[rappel.TypeCannabis]++
		default:
			t.Fatalf("row %s: organization %q", *row["NID"], org)
		}
	}
	recalls := map[string]bool{}
	for _, r := range c.csvRows {
		recalls[r[0]] = true
	}
	got[rappel.TypeVehicle] = len(recalls)
	total := 0
	for typ, want := range targets {
		if math.Abs(float64(got[typ]-want)) > 0.03*float64(want) {
			t.Errorf("%s: %d records, want %d ±3%%", typ, got[typ], want)
		}
		if m.Counts[typ] != got[typ] {
			t.Errorf("%s: manifest says %d, corpus has %d", typ, m.Counts[typ], got[typ])
		}
		total += got[typ]
	}
	if math.Abs(float64(total-41000)) > 0.03*41000 {
		t.Errorf("%d records, want 41,000 ±3%%", total)
	}
	// TestPlan_Scale (plan_test.go) checks the counts at scale 5 on the plan
	// alone: writing its quarter-million files takes a minute on a busy disk.
}

// pageRecallDate finds a current-layout page's recall date.
var pageRecallDate = regexp.MustCompile(`field--name-field-recall-date[^>]*><time datetime="(\d{4}-\d\d-\d\d)`)

func TestGenerate_Dates(t *testing.T) {
	c, _ := mustCorpus(t)
	ref := refDate.Format(time.DateOnly)
	recent := refDate.AddDate(0, 0, -29).Format(time.DateOnly)
	last30 := 0
	oldest := "9999"
	for nid, d := range c.docsEN {
		start := time.Unix(d.StartDate, 0).UTC().Format(time.DateOnly)
		pub := time.Unix(d.DatePublished, 0).UTC().Format(time.DateOnly)
		if pub > ref || start < "1991-01-01" {
			t.Fatalf("document %s: dates %s, %s outside 1991..%s", nid, start, pub, ref)
		}
		if start >= recent {
			last30++
		}
		oldest = min(oldest, start)
	}
	for name, b := range c.pages {
		// A current page's recall date; a legacy page's notice is older.
		m := pageRecallDate.FindSubmatch(b)
		if m == nil {
			if !bytes.Contains(b, []byte("recall-alert-body")) {
				t.Fatalf("page %s has no recall date", name)
			}
			continue
		}
		if start := string(m[1]); strings.HasPrefix(name, "en/") && start >= recent {
			last30++
		}
	}
	seen := map[string]bool{}
	for _, r := range c.csvRows {
		date := strings.ReplaceAll(r[14][:10], "/", "-")
		if date > ref {
			t.Fatalf("recall %s dated %s, after %s", r[0], date, ref)
		}
		if date >= recent && !seen[r[0]] {
			last30++
		}
		seen[r[0]] = true
		oldest = min(oldest, date)
	}
	if last30 < 100 {
		t.Errorf("%d recalls in the last 30 days, want 100 or more", last30)
	}
	if !strings.HasPrefix(oldest, "1991") {
		t.Errorf("the oldest recall is from %s, want 1991", oldest)
	}
	for _, row := range c.dumpEN {
		if organization(row) != "Controlled substances and cannabis" {
			continue
		}
		if d := c.docsEN[*row["NID"]]; d != nil && time.Unix(d.StartDate, 0).Before(time.Date(2018, 10, 17, 0, 0, 0, 0, time.UTC)) {
			t.Fatalf("cannabis notice %s is from before legalization", *row["NID"])
		}
	}
}

func TestGenerate_Text(t *testing.T) {
	c, _ := mustCorpus(t)
	fr := map[string]map[string]*string{}
	for _, row := range c.dumpFR {
		fr[*row["NID"]] = row
	}
	allergenKey := regexp.MustCompile(`<b>Allergens:</b> ([^<]*)<BR/>`)
	quirks := map[string]int{}
	names := map[string]bool{}
	for _, row := range c.dumpEN {
		title := *row["Title"]
		if strings.Contains(title, "\u200b") || title != strings.TrimSpace(title) {
			quirks["title space"]++
		}
		for _, k := range []string{"Title", "Issue", "What you should do"} {
			if v := row[k]; v != nil && strings.Contains(*v, "&nbsp;") {
				quirks["&nbsp;"]++
			}
			if v := row[k]; v != nil && strings.Contains(*v, "&amp;") {
				quirks["&amp;"]++
			}
		}
		if row["Product"] == nil {
			quirks["null product"]++
		}
		if v := row["Last updated"]; v != nil && len(*v) == 19 {
			quirks["time"]++
		}
		if isTC(row) {
			continue
		}
		f := fr[*row["NID"]]
		if f != nil && !strings.Contains(*f["Titre"], "rappelé") {
			t.Errorf("French title %q has no participle", *f["Titre"])
		}
		d := c.docsEN[*row["NID"]]
		if d == nil {
			continue
		}
		if m := allergenKey.FindStringSubmatch(d.keyText()); m != nil {
			for _, a := range strings.Split(m[1], ", ") {
				names[a] = true
				word := strings.ToLower(strings.TrimSuffix(strings.TrimSuffix(a, "s"), "nut"))
				if !strings.Contains(strings.ToLower(title), word) || !strings.Contains(strings.ToLower(plain(*row["Issue"])), word) {
					t.Errorf("allergen %s is not named in %q / %q", a, title, *row["Issue"])
				}
			}
		}
	}
	all := []string{"Milk", "Peanuts", "Gluten", "Egg", "Fish", "Sesame", "Soy", "Sulphites", "Tree nuts", "Wheat", "Mustard", "Crustaceans", "Shellfish"}
	if got := slices.Sorted(maps.Keys(names)); !slices.Equal(got, slices.Sorted(slices.Values(all))) {
		t.Errorf("Allergens names %q, want all of %q", got, all)
	}
	for _, q := range []string{"title space", "&nbsp;", "&amp;", "null product", "time"} {
		if quirks[q] == 0 {
			t.Errorf("no dump row shows the %s quirk", q)
		}
	}
}
