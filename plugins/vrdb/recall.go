package vrdb

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest"
)

// row is one usable row of the database: its cleaned columns and the values
// read from them.
type row struct {
	col        [numCols]string
	year       int    // 0 when the row names no model year
	units      int    // -1 when the row gives no usable count
	date       string // YYYY-MM-DD
	lastUpdate string // YYYY-MM-DD, or ""
	number     string
}

// parseRow reads a row's numbers and dates. skip, when not "", says why the
// row cannot be used at all, as a clause to follow "was skipped:": without a
// recall number it belongs to no recall, and without its model year or its
// recall date it would say something false about its recall. unused lists
// values the row is used without, each as a clause naming the column and
// the value: the count of units and the last update are the recall's, and
// its other rows may well give them.
func parseRow(col [numCols]string) (r *row, skip string, unused []string) {
	r = &row{col: col, number: col[colNumber], units: -1}
	switch {
	case r.number == "":
		return nil, "it has no RECALL_NUMBER_NUM", nil
	case !guest.IsNumber(r.number):
		return nil, fmt.Sprintf("its RECALL_NUMBER_NUM %q is not a recall number", r.number), nil
	}
	if s := col[colYear]; s != "" {
		y, ok := whole(s)
		if !ok || y < 1900 || y > 2100 {
			return nil, fmt.Sprintf("its YEAR %q is not a model year", s), nil
		}
		r.year = y
	}
	switch d, err := guest.ParseDate(col[colDate]); {
	case col[colDate] == "":
		return nil, "it has no RECALL_DATE_DTE", nil
	case err != nil:
		return nil, fmt.Sprintf("its RECALL_DATE_DTE %v", err), nil
	default:
		r.date = d
	}
	if s := col[colUnits]; s != "" {
		if u, ok := whole(s); ok {
			r.units = u
		} else {
			unused = append(unused, fmt.Sprintf("its UNIT_AFFECTED_NBR %q is not a whole number of units", s))
		}
	}
	if s := col[colLastUpdate]; s != "" {
		if d, err := guest.ParseDate(s); err == nil {
			r.lastUpdate = d
		} else {
			unused = append(unused, fmt.Sprintf("its LAST_UPDATE_DATE %v", err))
		}
	}
	return r, "", unused
}

// whole reads a non-negative whole number as the database's exports write
// one: "1200", "1200.0", or with thousands separators and two decimals,
// "40,915.00". A fraction other than zero, a sign, an exponent or a
// misplaced separator makes it not a whole number.
func whole(s string) (int, bool) {
	if i := strings.IndexByte(s, '.'); i >= 0 {
		frac := s[i+1:]
		if frac == "" || strings.Trim(frac, "0") != "" {
			return 0, false
		}
		s = s[:i]
	}
	if strings.IndexByte(s, ',') >= 0 {
		groups := strings.Split(s, ",")
		if len(groups[0]) < 1 || len(groups[0]) > 3 {
			return 0, false
		}
		for _, g := range groups[1:] {
			if len(g) != 3 {
				return 0, false
			}
		}
		s = strings.Join(groups, "")
	}
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false // no sign, no spaces: Atoi would take "+5"
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, false // out of range
	}
	return n, true
}

// productCategories are the categories, in lower case, whose rows name a
// product rather than a vehicle: the make is a brand (BRIDGESTONE, DIONO),
// the model a product line (a tire line and size, a car seat), and the
// year a year of manufacture. Their rows are listed in product_list as
// well as in affected_models; see testdata/FORMATS.md.
var productCategories = map[string]bool{"tire": true, "child car seat": true, "equipment": true}

// recall gathers the rows of one recall number, which need not be adjacent.
// Recall-level columns repeat on every row; the first row that fills one
// gives its value.
type recall struct {
	number     string
	col        [numCols]string // recall-level columns, first non-empty value of each
	date       string
	lastUpdate string // the latest of the rows'
	units      int
	models     map[rappel.VehicleModel]bool
	products   map[string]bool
	make       string // make and model of the first row that names a make
	model      string
}

// add takes one row into the recall.
func (g *recall) add(r *row) {
	if g.models == nil {
		g.models = make(map[rappel.VehicleModel]bool)
		g.products = make(map[string]bool)
		g.units = -1
	}
	for c, v := range r.col {
		if g.col[c] == "" {
			g.col[c] = v
		}
	}
	if g.date == "" {
		g.date = r.date
	}
	g.lastUpdate = max(g.lastUpdate, r.lastUpdate)
	g.units = max(g.units, r.units)
	mk, model := r.col[colMake], r.col[colModel]
	if mk == "" {
		return
	}
	if g.make == "" {
		g.make, g.model = mk, model
	}
	g.models[rappel.VehicleModel{Make: mk, Model: model, Year: r.year}] = true
	if productCategories[strings.ToLower(r.col[colCategoryEN])] {
		g.products[strings.TrimSpace(mk+" "+model)] = true
	}
}

// record makes the recall's record.
func (g *recall) record() *rappel.Record {
	models := make([]rappel.VehicleModel, 0, len(g.models))
	for m := range g.models {
		models = append(models, m)
	}
	slices.SortFunc(models, func(a, b rappel.VehicleModel) int {
		return cmp.Or(cmp.Compare(a.Make, b.Make), cmp.Compare(a.Model, b.Model), cmp.Compare(a.Year, b.Year))
	})
	rec := &rappel.Record{
		RecordID:                 rappel.TransportRecordID(g.number),
		RecallID:                 g.number,
		Agency:                   rappel.AgencyTransportCanada,
		RecallType:               rappel.TypeVehicle,
		Status:                   rappel.StatusActive,
		EventDate:                g.date,
		RecallDate:               g.date,
		LastUpdated:              cmp.Or(g.lastUpdate, g.date),
		ManufacturerRecallNumber: g.col[colManufacturerNo],
		Manufacturer:             g.col[colManufacturer],
		VehicleCategory:          g.col[colCategoryEN],
		System:                   g.col[colSystemEN],
		NotificationType:         g.col[colNotificationEN],
		VehicleMake:              g.make,
		VehicleModel:             g.model,
		VehicleSlugs:             slugs(models),
	}
	if len(models) > 0 {
		rec.AffectedModels = models
	}
	for _, name := range slices.Sorted(maps.Keys(g.products)) {
		rec.ProductList = append(rec.ProductList, rappel.Product{Name: name})
	}
	if g.units >= 0 {
		u := g.units
		rec.UnitsAffected = &u
	}
	years := g.years(models)
	rec.Translations.EN = translation(rappel.Translation{
		Title:             g.title(years, g.col[colSystemEN]),
		VehicleCategory:   g.col[colCategoryEN],
		System:            g.col[colSystemEN],
		NotificationType:  g.col[colNotificationEN],
		HazardDescription: g.col[colCommentEN],
	})
	rec.Translations.FR = translation(rappel.Translation{
		Title:             g.title(years, french(g.col[colSystemFR])),
		VehicleCategory:   french(g.col[colCategoryFR]),
		System:            french(g.col[colSystemFR]),
		NotificationType:  french(g.col[colNotificationFR]),
		HazardDescription: french(g.col[colCommentFR]),
	})
	return rec
}

// translation returns t, or nil when it holds nothing.
func translation(t rappel.Translation) *rappel.Translation {
	if t == (rappel.Translation{}) {
		return nil
	}
	return &t
}

// french drops the placeholder the database puts where a French text is
// missing: a record without French is better than one with this.
func french(s string) string {
	if strings.EqualFold(s, "Translation not available") {
		return ""
	}
	return s
}

// years returns the model years of the recall's first make and model, in
// order: what its fallback title names.
func (g *recall) years(models []rappel.VehicleModel) []int {
	var ys []int
	for _, m := range models {
		if m.Make == g.make && m.Model == g.model && m.Year != 0 {
			ys = append(ys, m.Year)
		}
	}
	return ys
}

// title is the fallback title "<Make> <Model> (<years>) – <system>", used
// when the dump has no notice for the recall. Parts the rows lack are left
// out; without a make there is no title.
func (g *recall) title(years []int, system string) string {
	if g.make == "" {
		return ""
	}
	t := g.make
	if g.model != "" {
		t += " " + g.model
	}
	if len(years) > 0 {
		t += " (" + yearRanges(years) + ")"
	}
	if system != "" {
		t += " – " + system
	}
	return t
}

// yearRanges writes sorted, distinct years compactly: "2015–2017, 2019".
func yearRanges(ys []int) string {
	var parts []string
	for i := 0; i < len(ys); {
		j := i
		for j+1 < len(ys) && ys[j+1] == ys[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(ys[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d–%d", ys[i], ys[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// slugs returns the distinct vehicle slugs of models, sorted.
func slugs(models []rappel.VehicleModel) []string {
	seen := make(map[string]bool)
	var out []string
	for _, m := range models {
		parts := []string{m.Make, m.Model}
		if m.Year != 0 {
			parts = append(parts, strconv.Itoa(m.Year))
		}
		s := slug(strings.Join(parts, " "))
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// slug lower-cases s and writes every run of characters other than ASCII
// letters and digits as one "-", so that "MERCEDES-BENZ C 300 2018" becomes
// "mercedes-benz-c-300-2018": a slug is matched and put in URLs, where "--"
// and non-ASCII only get in the way.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	return b.String()
}
