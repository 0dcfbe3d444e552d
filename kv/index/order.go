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

// docOrder is the document order itself: date descending.
var docOrder = orderKey{rappel.SortDate, false}

// sortOrders are the orders a snapshot keeps a permutation of, every
// sort key and direction but the document order.
var sortOrders = []orderKey{{rappel.SortDate, true}, {rappel.SortPublished, false}, {rappel.SortPublished, true},
	{rappel.SortValue, false}, {rappel.SortValue, true}}

// buildOrders sorts the documents for every sort key and direction.
func (s *Snapshot) buildOrders() {
	s.orders = map[orderKey][]int32{}
	for _, ok := range sortOrders {
		s.orders[ok] = s.sortedDocs(func(a, b int32) int {
			return compare(ok, s.key(ok.sortBy, a), s.ids.view(int(a)), s.key(ok.sortBy, b), s.ids.view(int(b)))
		})
	}
}

// after returns the first index of perm (nil for the document order)
// whose document comes after (k, id) in ok's order.
func (s *Snapshot) after(ok orderKey, perm []int32, k int64, id string) int {
	return sort.Search(s.n, func(i int) bool {
		d := int32(i)
		if perm != nil {
			d = perm[i]
		}
		return compare(ok, s.key(ok.sortBy, d), s.ids.view(int(d)), k, id) > 0
	})
}
