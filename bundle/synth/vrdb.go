package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// vrdbHeader is the first line of the Transport Canada CSV, as its daily
// extract writes it: no byte-order mark, the 17 columns, LF.
const vrdbHeader = `"RECALL_NUMBER_NUM","YEAR","MANUFACTURER_RECALL_NO_TXT","CATEGORY_ETXT","CATEGORY_FTXT",` +
	`"MAKE_NAME_NM","MODEL_NAME_NM","UNIT_AFFECTED_NBR","SYSTEM_TYPE_ETXT","SYSTEM_TYPE_FTXT",` +
	`"NOTIFICATION_TYPE_ETXT","NOTIFICATION_TYPE_FTXT","COMMENT_ETXT","COMMENT_FTXT","RECALL_DATE_DTE",` +
	`"LAST_UPDATE_DATE","MANUFACTURER_NAME_NM"` + "\n"

// vehicleRecall is one Transport Canada recall.
type vehicleRecall struct {
	mk     *vehicleMake
	models []*vehicleModel
	years  []int
	// cats are the categories the database lists the recall under: the
	// first is its models', and every model is repeated under the others.
	cats []*vehicleCategory
	def  *defect
}

// drawVehicle draws what a recall issued in year y covers: one make, one to
// six of its models in one category, and one to five consecutive model years
// that every one of those models was sold in, no newer than y+1 and no older
// than y-15. A recall of cars, SUVs, light trucks or minivans sometimes
// spans another of those categories too, with a model or two of it.
func drawVehicle(r *rand.Rand, y int) vehicleRecall {
	lo, hi := y-15, y+1
	catWeights := make([]int, len(vehicleCategories))
	for i, c := range vehicleCategories {
		catWeights[i] = c.weight
	}
	all := vehicleMakes()
	for attempt := 0; ; attempt++ {
		cat := &vehicleCategories[pickWeighted(r, catWeights)]
		if attempt > 50 {
			cat = &vehicleCategories[0]
		}
		var cands []*vehicleMake
		var weights []int
		for i := range all {
			if len(eligible(&all[i], cat.code, lo, hi, nil)) > 0 {
				cands = append(cands, &all[i])
				weights = append(weights, all[i].weight)
			}
		}
		if len(cands) == 0 {
			continue
		}
		mk := cands[pickWeighted(r, weights)]
		main := pick(r, eligible(mk, cat.code, lo, hi, nil))
		years := drawYears(r, main, lo, hi)
		models := []*vehicleModel{main}
		extra := eligible(mk, cat.code, lo, hi, years)
		for n := pickWeighted(r, []int{55, 20, 12, 7, 4, 2}); n > 0 && len(extra) > 0; n-- {
			i := r.IntN(len(extra))
			if extra[i] != main {
				models = append(models, extra[i])
			}
			extra = append(extra[:i], extra[i+1:]...)
		}
		cats := []*vehicleCategory{cat}
		if strings.IndexByte(passengerCategories, cat.code) >= 0 && chance(r, multiCategoryShare) {
			for i := range vehicleCategories {
				other := &vehicleCategories[i]
				if other == cat || strings.IndexByte(passengerCategories, other.code) < 0 {
					continue
				}
				if more := eligible(mk, other.code, lo, hi, years); len(more) > 0 && len(cats) < 3 && chance(r, 0.5) {
					cats = append(cats, other)
					models = append(models, pick(r, more))
				}
			}
		}
		var defs []*defect
		for i := range defects {
			d := &defects[i]
			if strings.IndexByte(d.cats, cat.code) >= 0 && y >= d.since {
				defs = append(defs, d)
			}
		}
		if len(defs) == 0 {
			continue
		}
		return vehicleRecall{mk: mk, models: models, years: years, cats: cats, def: pick(r, defs)}
	}
}

// multiCategoryShare is the share of passenger vehicle recalls the
// database lists under more than one category (16 of 104 in the real
// daily extract).
const multiCategoryShare = 0.2

// eligible returns mk's models of category cat sold in some year of
// [lo, hi], or, when years is given, in every one of years.
func eligible(mk *vehicleMake, cat byte, lo, hi int, years []int) []*vehicleModel {
	var out []*vehicleModel
	for i := range mk.models {
		m := &mk.models[i]
		if m.cat != cat {
			continue
		}
		ok := years != nil
		for _, y := range years {
			ok = ok && m.sells(y, hi)
		}
		for y := lo; years == nil && y <= hi && !ok; y++ {
			ok = m.sells(y, hi)
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

// drawYears draws the consecutive model years a recall covers, mostly
// recent ones.
func drawYears(r *rand.Rand, m *vehicleModel, lo, hi int) []int {
	var avail []int
	for y := lo; y <= hi; y++ {
		if m.sells(y, hi) {
			avail = append(avail, y)
		}
	}
	back := min(pickWeighted(r, []int{22, 26, 18, 12, 8, 6, 4, 2, 1, 1}), len(avail)-1)
	end := avail[len(avail)-1-back]
	span := 1 + pickWeighted(r, []int{30, 25, 20, 15, 10})
	years := []int{end}
	for y := end - 1; len(years) < span && m.sells(y, hi) && y >= lo; y-- {
		years = append([]int{y}, years...)
	}
	return years
}

// manufacturerNumber draws a manufacturer recall number in the make's style
// for a recall of year y.
func manufacturerNumber(r *rand.Rand, style string, y int) string {
	yy := y % 100
	switch style {
	case "ford":
		return fmt.Sprintf("%02d%s%02d", yy, pick(r, []string{"S", "C", "E", "V"}), between(r, 1, 99))
	case "gm":
		return fmt.Sprintf("N%02d%07d", yy, r.IntN(10000000))
	case "fca":
		return fmt.Sprintf("%s%02d", upperLetters(r, 1), between(r, 1, 99))
	case "toyota":
		return fmt.Sprintf("%02dT%s%02d", yy, upperLetters(r, 1), between(r, 1, 30))
	case "honda":
		return fmt.Sprintf("%s%d%s", upperLetters(r, 1), r.IntN(10), upperLetters(r, 1))
	case "hk":
		if chance(r, 0.5) {
			return fmt.Sprintf("SC%03d", between(r, 1, 320))
		}
		return fmt.Sprintf("%03d", between(r, 1, 260))
	case "nissan":
		return fmt.Sprintf("R%02d%02d", yy, between(r, 1, 40))
	}
	switch r.IntN(4) {
	case 0:
		return fmt.Sprintf("%02dV-%03d", yy, between(r, 1, 900))
	case 1:
		return fmt.Sprintf("P%03d", between(r, 1, 999))
	case 2:
		return fmt.Sprintf("RC-%04d", between(r, 1, 2000))
	}
	return fmt.Sprintf("%02d-%03d", yy, between(r, 1, 300))
}

// manufacturerNumbers draws the manufacturer recall numbers of a recall of
// year y: mostly one, sometimes two or three joined by " / " (one campaign
// per model or plant), rarely the next ones abbreviated to their digits
// ("CR5350/5351"), as Transport Canada writes them.
func manufacturerNumbers(r *rand.Rand, style string, y int) string {
	first := manufacturerNumber(r, style, y)
	n := pickWeighted(r, []int{91, 7, 2})
	if n == 0 {
		return first
	}
	nums := []string{first}
	for range n {
		nums = append(nums, manufacturerNumber(r, style, y))
	}
	if digits := len(first) - len(strings.TrimRight(first, "0123456789")); n == 1 && digits >= 2 && digits < len(first) && chance(r, 0.15) {
		last, _ := strconv.Atoi(first[len(first)-digits:])
		if next := fmt.Sprintf("%0*d", digits, last+1); len(next) == digits {
			return first + "/" + next
		}
	}
	return strings.Join(nums, " / ")
}

// unitsAffected draws how many units a recall covers, by category.
func unitsAffected(r *rand.Rand, cat byte) int {
	lo, hi := 0.5, 5.3 // log10 range for cars and light trucks
	switch cat {
	case 'H', 'K', 'M', '3', 'L':
		lo, hi = 0, 3.8
	case 'B', 'D', 'R', 'P', 'Y':
		lo, hi = 0, 3.2
	case 'A', 'X', 'N':
		lo, hi = 1, 4
	case 'W':
		lo, hi = 1, 5.5
	case 'S':
		lo, hi = 2, 5.2
	case 'E':
		lo, hi = 1, 4.5
	}
	return int(math.Round(math.Pow(10, lo+r.Float64()*(hi-lo))))
}

// formatUnits writes a count as UNIT_AFFECTED_NBR does: thousands
// separators and two decimals, "40,915.00".
func formatUnits(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s + ".00"
}

// notification draws the notification type of a recall, English and
// French, in the database's vocabulary: mostly the manufacturer's safety or
// compliance recall, some ordered by Transport Canada, a few found by its
// audits, replaced by a later recall, or of no consequence for safety.
func notification(r *rand.Rand, compliance bool) (string, string) {
	types := [][2]string{
		{"Safety Mfr", "Sécurité - fabricant"}, {"Safety TC", "Sécurité - TC"},
		{"Compliance Mfr", "Conformité - fabricant"}, {"Compliance TC", "Conformité - TC"},
		{"Recalls Audit", "Rappels - audit"}, {"Superseded", "Remplacé"}, {"Inconsequential", "Sans conséquences"},
	}
	weights := []int{900, 40, 0, 0, 25, 25, 10}
	if compliance {
		weights = []int{0, 0, 800, 100, 25, 25, 50}
	}
	t := types[pickWeighted(r, weights)]
	return t[0], t[1]
}

// superseded is the line the database puts first in the comments of a
// recall a later one replaced, English and French.
func superseded(r *rand.Rand, y int) (string, string) {
	n := fmt.Sprintf("%d-%03d", y, between(r, 1, 999))
	return "This recall was replaced by Transport Canada recall number " + n + ". \n\n",
		"Ce campagne a été remplacé par le rappel no. " + n + " de Transports Canada. \n\n"
}

// headedShare is the share of a year's recalls whose comments are the
// three headed paragraphs (Issue, Safety Risk, Corrective Actions) rather
// than one paragraph: the database's style since 2019.
func headedShare(y int) float64 {
	switch {
	case y >= 2019:
		return 0.95
	case y >= 2015:
		return 0.15
	}
	return 0
}

// vehicle assembles the CSV rows of one Transport Canada recall and, for
// most recalls, its TC row in the Health Canada dump. The rows are those of
// the daily extract: one per category, model and model year, by model year,
// every recall-level column repeated, quoted as the extract quotes them.
func (g *generator) vehicle(e *entry) output {
	r := newRand(g.seed, e.key)
	y := e.day.year()
	v := drawVehicle(r, y)
	rn := e.recallNumber
	mfr := ""
	if chance(r, mfrShare) {
		mfr = manufacturerNumbers(r, v.mk.style, y)
	}
	units := formatUnits(unitsAffected(r, v.cats[0].code))
	notifEN, notifFR := notification(r, v.def.compliance)
	brand := v.mk.display
	if v.mk.manufacturer != v.mk.name {
		brand = titleCase(v.mk.manufacturer)
	}
	headed := chance(r, headedShare(y))
	commentEN, commentFR := v.def.comment(false, headed, brand), v.def.comment(true, headed, brand)
	if notifEN == "Superseded" {
		en, fr := superseded(r, y)
		commentEN, commentFR = en+commentEN, fr+commentFR
	}
	updated := e.day
	switch pickWeighted(r, []int{55, 30, 15}) {
	case 1:
		updated = min(e.day+day(between(r, 1, 60)), g.ref)
	case 2:
		updated = min(e.day+day(between(r, 61, 2000)), g.ref)
	}
	sys := systems[v.def.sys]

	type cell struct {
		cat   *vehicleCategory
		model *vehicleModel
	}
	var cells []cell
	for _, c := range v.cats {
		for _, m := range v.models {
			cells = append(cells, cell{c, m})
		}
	}
	out := output{csvRows: len(cells) * len(v.years)}
	var b []byte
	for _, year := range v.years {
		// Within a model year the database lists models and categories
		// in no particular order.
		r.Shuffle(len(cells), func(i, j int) { cells[i], cells[j] = cells[j], cells[i] })
		for _, c := range cells {
			// Numbers are not quoted, unless their thousands separator
			// needs it ("40,915.00", but 11.00); nor are empty fields.
			b = appendCSVField(b, rn)
			b = strconv.AppendInt(append(b, ','), int64(year), 10)
			for i, f := range []string{mfr, c.cat.en, c.cat.fr, v.mk.name, c.model.name, units, sys.en, sys.fr,
				notifEN, notifFR, commentEN, commentFR, e.day.String(), updated.String(), v.mk.manufacturer} {
				b = append(b, ',')
				switch {
				case f == "":
				case i == 5 && strings.IndexByte(f, ',') < 0:
					b = append(b, f...)
				default:
					b = appendCSVField(b, f)
				}
			}
			b = append(b, '\n')
		}
	}
	out.csv = b
	if e.inDump {
		out.dumpEN, out.dumpFR = g.tcRows(r, e, &v, rn, updated)
	}
	return out
}

// mfrShare is the share of vehicle recalls with a manufacturer recall
// number (FORMATS.md: empty on ~10%).
const mfrShare = 0.9
