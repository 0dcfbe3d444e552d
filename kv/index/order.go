package index

import (
	"sort"
	"strings"

	"github.com/rappel-ca/rappel"
)

// noUnits marks a record without units_affected; it sorts last both ways.
const noUnits = -1

// orderKey names one document order: a sort key and a direction.
type orderKey struct {
	sortBy string
	asc    bool
}

// key returns doc's value for sortBy.
func (s *Snapshot) key(sortBy string, doc int32) int64 {
	switch sortBy {
	case rappel.SortPublished:
		return int64(s.recallDay[doc])
	case rappel.SortValue:
		return s.units[doc]
	}
	return int64(s.eventDay[doc])
}

// compare orders (k1, id1) against (k2, id2) in ok's order: the key in
// ok's direction, records without units last, ties on record_id ascending.
func compare(ok orderKey, k1 int64, id1 string, k2 int64, id2 string) int {
	if k1 != k2 {
		if ok.sortBy == rappel.SortValue && (k1 == noUnits || k2 == noUnits) {
			if k1 == noUnits {
				return 1
			}
			return -1
		}
		if (k1 < k2) == ok.asc {
			return -1
		}
		return 1
	}
	return strings.Compare(id1, id2)
}

// buildOrders sorts the documents for every sort key and direction. The
// default order, date descending, is the document order itself.
func (s *Snapshot) buildOrders() {
	s.orders = map[orderKey][]int32{}
	for _, sortBy := range []string{rappel.SortDate, rappel.SortPublished, rappel.SortValue} {
		for _, asc := range []bool{false, true} {
			ok := orderKey{sortBy, asc}
			perm := make([]int32, len(s.ids))
			for i := range perm {
				perm[i] = int32(i)
			}
			if ok != (orderKey{rappel.SortDate, false}) {
				sort.Slice(perm, func(i, j int) bool {
					a, b := perm[i], perm[j]
					return compare(ok, s.key(sortBy, a), s.ids[a], s.key(sortBy, b), s.ids[b]) < 0
				})
			}
			s.orders[ok] = perm
		}
	}
}

// after returns the first index of perm whose document comes after (k, id)
// in ok's order.
func (s *Snapshot) after(ok orderKey, perm []int32, k int64, id string) int {
	return sort.Search(len(perm), func(i int) bool {
		d := perm[i]
		return compare(ok, s.key(ok.sortBy, d), s.ids[d], k, id) > 0
	})
}
