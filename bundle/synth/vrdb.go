package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// vrdbHeader is the first line of the Transport Canada CSV, after its BOM.
const vrdbHeader = `"RECALL_NUMBER_NUM","YEAR","MANUFACTURER_RECALL_NO_TXT","CATEGORY_ETXT","CATEGORY_FTXT",` +
	`"MAKE_NAME_NM","MODEL_NAME_NM","UNIT_AFFECTED_NBR","SYSTEM_TYPE_ETXT","SYSTEM_TYPE_FTXT",` +
	`"NOTIFICATION_TYPE_ETXT","NOTIFICATION_TYPE_FTXT","COMMENT_ETXT","COMMENT_FTXT","RECALL_DATE_DTE"` + "\r\n"

// vehicleRecall is one Transport Canada recall.
type vehicleRecall struct {
	mk     *vehicleMake
	models []*vehicleModel
	years  []int
	cat    *vehicleCategory
	def    *defect
}

// drawVehicle draws what a recall issued in year y covers: one make, one to
// six of its models in one category, and one to five consecutive model years
// that every one of those models was sold in, no newer than y+1 and no older
// than y-15.
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
		return vehicleRecall{mk: mk, models: models, years: years, cat: cat, def: pick(r, defs)}
	}
}

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

// unitsAffected draws how many units a recall covers, by category.
func unitsAffected(r *rand.Rand, cat byte) int {
	lo, hi := 0.5, 5.3 // log10 range for cars and light trucks
	switch cat {
	case 'H', 'M', 'L':
		lo, hi = 0, 3.8
	case 'B', 'R':
		lo, hi = 0, 3.2
	case 'W':
		lo, hi = 1, 5.5
	case 'S':
		lo, hi = 2, 5.2
	case 'E':
		lo, hi = 1, 4.5
	}
	return int(math.Round(math.Pow(10, lo+r.Float64()*(hi-lo))))
}

// notification draws the notification type of a recall.
func notification(r *rand.Rand, compliance bool) (string, string) {
	if compliance {
		if chance(r, 0.85) {
			return "Compliance Mfr", "Conformité fab"
		}
		return "Compliance TC", "Conformité TC"
	}
	if chance(r, 0.94) {
		return "Safety Mfr", "Sécurité fab"
	}
	return "Safety TC", "Sécurité TC"
}

// vehicle assembles the CSV rows of one Transport Canada recall and, for
// most recalls, its TC row in the Health Canada dump.
func (g *generator) vehicle(e *entry) output {
	r := newRand(g.seed, e.key)
	v := drawVehicle(r, e.day.year())
	rn := e.recallNumber
	mfr := ""
	if chance(r, mfrShare) {
		mfr = manufacturerNumber(r, v.mk.style, e.day.year())
	}
	units := strconv.Itoa(unitsAffected(r, v.cat.code))
	if chance(r, 0.04) {
		units += ".0"
	}
	yearSuffix := ""
	if chance(r, 0.04) {
		yearSuffix = ".0"
	}
	notifEN, notifFR := notification(r, v.def.compliance)
	commentFR := v.def.commentFR
	if chance(r, 0.03) {
		commentFR = "Translation not available"
	}
	date := e.day.String()
	switch pickWeighted(r, []int{75, 12, 13}) {
	case 1:
		date += " 00:00:00"
	case 2:
		date = strings.ReplaceAll(date, "-", "/")
	}
	sys := systems[v.def.sys]

	out := output{csvRows: len(v.models) * len(v.years)}
	var b []byte
	for _, m := range v.models {
		for _, y := range v.years {
			for i, f := range []string{rn, strconv.Itoa(y) + yearSuffix, mfr, v.cat.en, v.cat.fr, v.mk.name, m.name, units,
				sys.en, sys.fr, notifEN, notifFR, v.def.commentEN, commentFR, date} {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendCSVField(b, f)
			}
			b = append(b, '\r', '\n')
		}
	}
	out.csv = b
	if e.inDump {
		out.dumpEN, out.dumpFR = g.tcRows(r, e, &v, rn)
	}
	return out
}

// mfrShare is the share of vehicle recalls with a manufacturer recall
// number (FORMATS.md: empty on ~10%).
const mfrShare = 0.9
