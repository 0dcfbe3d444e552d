package vindecode

import (
	"bufio"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"sync"
)

// tableFS holds the tables: countries.tsv, wmi.tsv and the VDS rules,
// vds-*.tsv.
//
//go:embed tables/*.tsv
var tableFS embed.FS

// tables is everything the decoder knows, built from the TSV files.
type tables struct {
	wmi3      map[string]*wmiEntry  // 3-character WMIs
	wmi6      map[[6]byte]*wmiEntry // small makers: positions 1-3 and 12-14
	countries []countryRange
	rules     int     // VDS rules attached
	errs      []error // rows left out because they do not parse
}

var (
	embeddedOnce   sync.Once
	embeddedTables *tables
)

// loadTables returns the embedded tables, read on first use. A row that
// does not parse is left out rather than failing the decode of every VIN;
// TestTables requires that there be none.
func loadTables() *tables {
	embeddedOnce.Do(func() { embeddedTables = readTables(tableFS) })
	return embeddedTables
}

// Columns of each table; the header line must name them in this order.
var (
	countryColumns = []string{"from", "to", "country"}
	wmiColumns     = []string{"wmi", "make", "manufacturer", "kind", "country"}
	vdsColumns     = []string{"wmi", "vds", "years", "make", "model"}
)

// readTables reads the tables of fsys (laid out as tableFS). VDS files are
// read in name order, and their rules tried in that order.
func readTables(fsys fs.FS) *tables {
	t := &tables{wmi3: make(map[string]*wmiEntry, 512), wmi6: make(map[[6]byte]*wmiEntry, 16)}
	for _, r := range t.read(fsys, "tables/countries.tsv", countryColumns) {
		t.addCountry(r)
	}
	for _, r := range t.read(fsys, "tables/wmi.tsv", wmiColumns) {
		t.addWMI(r)
	}
	names, _ := fs.Glob(fsys, "tables/vds-*.tsv") // the pattern is well formed
	for _, name := range names {
		for _, r := range t.read(fsys, name, vdsColumns) {
			t.addRule(r)
		}
	}
	return t
}

// row is one data line of a table, with its fields: as many as the header
// names, trailing empty fields included.
type row struct {
	at string // file:line, for errors
	f  []string
}

func (t *tables) errorf(r row, format string, args ...any) {
	t.errs = append(t.errs, fmt.Errorf("%s: %s", r.at, fmt.Sprintf(format, args...)))
}

// read reads the rows of a TSV file: lines starting with # and blank lines
// are comments, the first other line is the header, which must be cols,
// and each other line a row of at most len(cols) tab-separated fields
// (trailing empty fields may be left out).
func (t *tables) read(fsys fs.FS, name string, cols []string) []row {
	f, err := fsys.Open(name)
	if err != nil {
		t.errs = append(t.errs, fmt.Errorf("opening table: %w", err))
		return nil
	}
	defer f.Close()
	var rows []row
	header := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := row{at: path.Base(name) + ":" + strconv.Itoa(n), f: strings.Split(line, "\t")}
		if !header {
			header = true
			if strings.Join(r.f, "\t") != strings.Join(cols, "\t") {
				t.errorf(r, "header %q, want the columns %q", r.f, cols)
				return nil
			}
			continue
		}
		if len(r.f) > len(cols) {
			t.errorf(r, "%d fields, but the table has %d columns", len(r.f), len(cols))
			continue
		}
		for len(r.f) < len(cols) {
			r.f = append(r.f, "")
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.errs = append(t.errs, fmt.Errorf("reading %s: %w", name, err))
	}
	if !header {
		t.errs = append(t.errs, fmt.Errorf("%s: no header line", name))
	}
	return rows
}

// addCountry adds a row of countries.tsv: the first and last code of a
// block (two characters each, the same first one) and its country.
func (t *tables) addCountry(r row) {
	from, to, name := r.f[0], r.f[1], r.f[2]
	switch {
	case len(from) != 2 || len(to) != 2 || from[0] != to[0]:
		t.errorf(r, "the block %s-%s is not two codes of two characters with the same first one", from, to)
	case isoRank[from[1]] == 0 || isoRank[to[1]] == 0 || isoRank[from[1]] > isoRank[to[1]]:
		t.errorf(r, "the block %s-%s does not run forwards in ISO order (%s)", from, to, isoOrder)
	case name == "":
		t.errorf(r, "no country named for the block")
	default:
		t.countries = append(t.countries, countryRange{first: from[0], lo: from[1], hi: to[1], name: name})
	}
}

// addWMI adds a row of wmi.tsv: space-separated WMIs that share a make
// (empty when brands share them), manufacturer, kind and, where it is not
// the one their first characters name, country.
func (t *tables) addWMI(r row) {
	codes, mk, mfr, kindName, country := strings.Fields(r.f[0]), r.f[1], r.f[2], r.f[3], r.f[4]
	k, ok := kinds[kindName]
	switch {
	case len(codes) == 0:
		t.errorf(r, "no WMI in the wmi column")
		return
	case mk != strings.ToUpper(mk):
		t.errorf(r, "make %q is not upper case", mk)
		return
	case mfr == "":
		t.errorf(r, "no manufacturer named")
		return
	case !ok:
		t.errorf(r, "kind %q is none of light, heavy, moto, other", kindName)
		return
	}
	for _, code := range codes {
		if !wmiCode(code) {
			t.errorf(r, "WMI %q is neither 3 VIN characters nor 6 with a 9 third", code)
			continue
		}
		e := &wmiEntry{wmi: code, make: mk, mfr: mfr, kind: k, country: country}
		if len(code) == 3 {
			if t.wmi3[code] != nil {
				t.errorf(r, "WMI %s listed twice", code)
				continue
			}
			t.wmi3[code] = e
			continue
		}
		k6 := [6]byte([]byte(code))
		if t.wmi6[k6] != nil {
			t.errorf(r, "WMI %s listed twice", code)
			continue
		}
		t.wmi6[k6] = e
	}
}

// wmiCode reports whether code is a WMI: 3 VIN characters, or 6 with a 9
// third (small manufacturers, positions 1-3 and 12-14).
func wmiCode(code string) bool {
	if len(code) != 3 && (len(code) != 6 || code[2] != '9') {
		return false
	}
	for i := 0; i < len(code); i++ {
		if vinIndex[code[i]] < 0 {
			return false
		}
	}
	return true
}

// addRule adds a row of a vds-*.tsv: the 3-character WMIs it applies to
// (listed in wmi.tsv), the pattern over positions 4-8, the model years
// ("2011-2014", "2011", "-2010", "2011-" or empty for all), the brand and
// the model.
func (t *tables) addRule(r row) {
	mask, ok := compileVDS(r.f[1])
	if !ok {
		t.errorf(r, "malformed pattern %q", r.f[1])
		return
	}
	from, to, ok := parseYears(r.f[2])
	if !ok {
		t.errorf(r, "years %q are not YYYY, YYYY-, -YYYY or YYYY-YYYY running forwards", r.f[2])
		return
	}
	rule := vdsRule{mask: mask, from: from, to: to, make: r.f[3], model: r.f[4]}
	switch {
	case rule.make == "" && rule.model == "":
		t.errorf(r, "the rule names neither make nor model")
		return
	case rule.make != strings.ToUpper(rule.make) || rule.model != strings.ToUpper(rule.model):
		t.errorf(r, "make and model must be upper case")
		return
	}
	codes := strings.Fields(r.f[0])
	if len(codes) == 0 {
		t.errorf(r, "no WMI in the wmi column")
	}
	for _, code := range codes {
		e := t.wmi3[code]
		if e == nil {
			t.errorf(r, "WMI %s is not in wmi.tsv", code)
			continue
		}
		if rule.model == "" {
			e.brands = append(e.brands, rule)
		} else {
			e.models = append(e.models, rule)
		}
		t.rules++
	}
}

// parseYears reads a model-year range: "" (any), "2011", "2011-",
// "-2010" or "2011-2014".
func parseYears(s string) (from, to int, ok bool) {
	if s == "" {
		return 0, 0, true
	}
	a, b, dash := strings.Cut(s, "-")
	if !dash {
		b = a
	}
	year := func(s string) (int, bool) {
		if s == "" {
			return 0, true
		}
		y, err := strconv.Atoi(s)
		return y, err == nil && len(s) == 4 && y >= 1980
	}
	from, okA := year(a)
	to, okB := year(b)
	return from, to, okA && okB && (from != 0 || to != 0) && (to == 0 || from <= to)
}
