package synth_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rappel-ca/rappel/bundle/synth"
	"github.com/rappel-ca/rappel/plugins/plugintest"
)

// refDate is the reference date of the shared corpus: fixed, so that the
// tests see the same corpus on any day.
var refDate = time.Date(2025, 6, 30, 0, 0, 0, 0, time.UTC)

// The scale-1 corpus most tests read is generated once per test binary, in
// a temporary directory TestMain removes.
var (
	sharedDir  string
	sharedOnce sync.Once
	sharedErr  error
	shared     *corpus
	sharedMan  synth.Manifest
)

func TestMain(m *testing.M) {
	plugintest.ServeChild() // a plugin run, when the host started this binary as its child
	dir, err := os.MkdirTemp("", "synth-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sharedDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// mustCorpus returns the shared scale-1 corpus, generated and parsed on
// first use.
func mustCorpus(tb testing.TB) (*corpus, synth.Manifest) {
	tb.Helper()
	sharedOnce.Do(func() {
		sharedMan, sharedErr = synth.Generate(sharedDir, synth.Config{Seed: 1, ReferenceDate: refDate, Scale: 1})
		if sharedErr == nil {
			shared, sharedErr = readCorpus(sharedDir)
		}
	})
	if sharedErr != nil {
		tb.Fatalf("generating the shared corpus: %v", sharedErr)
	}
	return shared, sharedMan
}

// corpus is a generated corpus read back: the dumps, the CSV and the detail
// documents.
type corpus struct {
	dir      string
	dumpEN   []map[string]*string
	dumpFR   []map[string]*string
	csvRaw   []byte
	csvRows  [][]string // without the header
	docsEN   map[string]*detailDoc
	docsFR   map[string]*detailDoc
	docBytes map[string][]byte // "en/<NID>" → raw bytes
	pages    map[string][]byte // "en/<NID>" → a recall page's bytes
}

// detailDoc is the detail document shapes of FORMATS.md: the detail API's
// and the older one.
type detailDoc struct {
	URL           string   `json:"url"`
	RecallID      string   `json:"recallId"`
	Title         string   `json:"title"`
	StartDate     int64    `json:"start_date"`
	DatePublished int64    `json:"date_published"`
	Category      []string `json:"category"`
	Panels        []struct {
		PanelName string          `json:"panelName"`
		Title     string          `json:"title"`
		Text      string          `json:"text"`
		Data      json.RawMessage `json:"data"`
	} `json:"panels"`
}

// legacy reports whether the document is in the older shape, the one
// with a details panel of key/value lines.
func (d *detailDoc) legacy() bool {
	_, ok := d.panel("details")
	return ok
}

// keyText returns the text of the document's panel of key/value details:
// details in the older shape, basic_details in the API's.
func (d *detailDoc) keyText() string {
	if text, ok := d.panel("details"); ok {
		return text
	}
	text, _ := d.panel("basic_details")
	return text
}

// productText returns the text of all the document's product panels.
func (d *detailDoc) productText() string {
	var sb strings.Builder
	for _, p := range d.Panels {
		if strings.HasPrefix(p.PanelName, "product_") {
			sb.WriteString(p.Text)
		}
	}
	return sb.String()
}

// panel returns the text of the document's panel named name.
func (d *detailDoc) panel(name string) (string, bool) {
	for _, p := range d.Panels {
		if p.PanelName == name {
			return p.Text, true
		}
	}
	return "", false
}

// readCorpus reads a corpus directory.
func readCorpus(dir string) (*corpus, error) {
	c := &corpus{dir: dir, docsEN: map[string]*detailDoc{}, docsFR: map[string]*detailDoc{}, docBytes: map[string][]byte{}, pages: map[string][]byte{}}
	for _, f := range []struct {
		name string
		into *[]map[string]*string
	}{{"hc/recalls-en.json", &c.dumpEN}, {"hc/recalls-fr.json", &c.dumpFR}} {
		b, err := os.ReadFile(filepath.Join(dir, f.name))
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, f.into); err != nil {
			return nil, fmt.Errorf("%s is not a JSON array of objects with string or null values: %w", f.name, err)
		}
	}
	var err error
	if c.csvRaw, err = os.ReadFile(filepath.Join(dir, "tc/vrdb.csv")); err != nil {
		return nil, err
	}
	rd := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(c.csvRaw, []byte("\ufeff"))))
	rows, err := rd.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("tc/vrdb.csv: %w", err)
	}
	c.csvRows = rows[1:]
	for lang, into := range map[string]map[string]*detailDoc{"en": c.docsEN, "fr": c.docsFR} {
		entries, err := os.ReadDir(filepath.Join(dir, "detail", lang))
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(dir, "detail", lang, e.Name()))
			if err != nil {
				return nil, err
			}
			if nid, ok := strings.CutSuffix(e.Name(), ".html"); ok {
				c.pages[lang+"/"+nid] = b // read back by TestGenerate_Pages
				continue
			}
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.DisallowUnknownFields()
			var d detailDoc
			if err := dec.Decode(&d); err != nil {
				return nil, fmt.Errorf("detail/%s/%s: %w", lang, e.Name(), err)
			}
			nid := strings.TrimSuffix(e.Name(), ".json")
			into[nid] = &d
			c.docBytes[lang+"/"+nid] = b
		}
	}
	return c, nil
}

// isTC reports whether a dump row is a Transport Canada row.
func isTC(row map[string]*string) bool { return organization(row) == "TC" }

// organization returns a dump row's Organization in the newer vocabulary:
// a row written in the older one (Archived "No" or "Yes") names its
// agency in full, and a Health Canada row's kind is its Category's sector.
func organization(row map[string]*string) string {
	o := row["Organization"]
	if o == nil {
		return ""
	}
	if a := row["Archived"]; a == nil || *a != "No" && *a != "Yes" {
		return *o
	}
	switch *o {
	case "Canadian Food Inspection Agency":
		return "CFIA"
	case "Transport Canada":
		return "TC"
	}
	category := ""
	if c := row["Category"]; c != nil {
		category = *c
	}
	for sector, org := range map[string]string{"Health products - ": "Drugs and health products",
		"Medical devices - ": "Medical devices", "Consumer products - ": "Consumer product safety", "Cannabis": "Controlled substances and cannabis"} {
		if strings.HasPrefix(category, sector) {
			return org
		}
	}
	return *o
}

// share returns n/d in percent.
func share(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return 100 * float64(n) / float64(d)
}

// errorf is fmt.Errorf, for helpers that return errors to tests.
var errorf = fmt.Errorf
