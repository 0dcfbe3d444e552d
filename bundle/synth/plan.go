package synth

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/rappel-ca/rappel"
)

// entry is one record of the corpus as planned: its type, date and
// identifiers. Its content is drawn later from its own random stream (key),
// so the plan stays small even at a million records.
type entry struct {
	key          uint64
	seq          int32 // index before the plan is sorted by date
	origSeq      int32 // for an updated notice, the seq of the one it updates
	day          day   // event date
	typ          int
	inDump       bool // has a row in the Health Canada dump
	hasFR        bool // the row has a French twin (and the notice a French document)
	hasDetail    bool // has detail documents
	update       bool // updates an older notice, whose NID is its recallId
	nid          int64
	origKey      uint64
	origNID      int64
	recallNumber string // vehicles
}

// Plan-level shares.
const (
	updateShare = 0.005 // notices that update an older one
	// ramp is how much denser the newest dates are than the oldest: the
	// density of event dates grows linearly from 1 to 1+ramp, which puts
	// about 1.6 times the average yearly count in the last year and keeps
	// well over a hundred recalls in any recent 30 days.
	ramp = 3.0
)

var (
	firstDay    = dayOf(time.Date(1991, 1, 1, 0, 0, 0, 0, time.UTC))
	cannabisDay = dayOf(time.Date(2018, 10, 17, 0, 0, 0, 0, time.UTC)) // legalization
	// pagesDay is when the old detail API froze and the recalls site's
	// pages became the only detail (rappel.FirstPageNID).
	pagesDay = dayOf(time.Date(2021, 11, 1, 0, 0, 0, 0, time.UTC))
)

// plan draws every entry of the corpus, sorted by date, with NIDs and
// Transport Canada recall numbers assigned in date order.
func (g *generator) plan() []entry {
	r := newRand(g.seed, 1<<62)
	var all []entry
	for typ := range numTypes {
		n := int(math.Round(typeTargets[typ] * g.scale))
		start := firstDay
		if typ == typeCannabis {
			start = cannabisDay
		}
		if start > g.ref-365 {
			start = g.ref - 365
		}
		days := make([]day, n)
		for i := range days {
			days[i] = drawDay(r.Float64(), start, g.ref)
		}
		slices.Sort(days)
		base := len(all)
		for i, d := range days {
			e := entry{key: uint64(typ)<<40 | uint64(i), seq: int32(len(all)), origSeq: -1, day: d, typ: typ}
			if typ == typeVehicle {
				e.inDump = chance(r, dumpTCShare)
				e.hasFR = e.inDump && chance(r, frenchShare)
			} else {
				e.inDump, e.hasFR, e.hasDetail = true, chance(r, frenchShare), chance(r, detailShare)
				if i > 0 && chance(r, updateShare) {
					g.linkUpdate(r, &e, all[base:], i)
				}
			}
			all = append(all, e)
		}
	}
	slices.SortStableFunc(all, func(a, b entry) int { return cmp.Compare(a.day, b.day) })
	g.number(r, all)
	return all
}

// linkUpdate makes e (the i-th notice of its type, by date) an update of an
// older notice of the same type among the previous few hundred, if one has
// an earlier date and is not an update itself.
func (g *generator) linkUpdate(r *rand.Rand, e *entry, same []entry, i int) {
	for range 5 {
		q := max(0, i-400) + r.IntN(min(i, 400))
		o := &same[q]
		if o.update || o.day >= e.day {
			continue
		}
		e.update, e.hasDetail = true, true
		e.origKey, e.origSeq = o.key, o.seq
		return
	}
}

// number assigns NIDs to dump rows and recall numbers to vehicle recalls, in
// date order, and resolves updated notices' recallIds.
func (g *generator) number(r *rand.Rand, all []entry) {
	pos := make([]int32, len(all))
	perYear := map[int]int{}
	for i := range all {
		pos[all[i].seq] = int32(i)
		if all[i].typ == typeVehicle {
			perYear[all[i].day.year()]++
		}
	}
	// YYYYNNN: three digits of sequence hold a year at scale 1; a larger
	// corpus widens every number alike rather than break uniqueness.
	width := 3
	for _, n := range perYear {
		width = max(width, len(strconv.Itoa(n)))
	}
	seqs := map[int]int{}
	nid := int64(10000)
	for i := range all {
		e := &all[i]
		if e.inDump {
			if e.day >= pagesDay {
				// The site's node numbers: its pages since November
				// 2021 come after the old API's last notice.
				nid = max(nid, rappel.FirstPageNID-1)
			}
			nid += 1 + int64(r.IntN(3)*r.IntN(2))
			e.nid = nid
		}
		if e.typ == typeVehicle {
			y := e.day.year()
			seqs[y]++
			e.recallNumber = fmt.Sprintf("%d%0*d", y, width, seqs[y])
		}
	}
	for i := range all {
		if e := &all[i]; e.update {
			e.origNID = all[pos[e.origSeq]].nid
		}
	}
}

// drawDay maps u in [0, 1) to a day in [start, ref] whose density grows
// linearly with time (the inverse of the ramp's distribution function).
func drawDay(u float64, start, ref day) day {
	t := (math.Sqrt(1+2*ramp*u*(1+ramp/2)) - 1) / ramp
	d := start + day(t*float64(ref-start+1))
	return min(d, ref)
}
