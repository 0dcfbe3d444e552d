package index

import "unsafe"

// table is a list of byte strings kept as one blob and a column of
// offsets: string i is blob[offs[i]:offs[i+1]]. A built snapshot appends
// to it; one read from a segment views the segment's bytes.
type table struct {
	blob []byte
	offs []uint32
}

func newTable(n, size int) table {
	t := table{blob: make([]byte, 0, size), offs: make([]uint32, 1, n+1)}
	return t
}

// add appends v.
func (t *table) add(v string) {
	t.blob = append(t.blob, v...)
	t.offs = append(t.offs, uint32(len(t.blob)))
}

func (t table) len() int { return max(len(t.offs)-1, 0) }

func (t table) at(i int) []byte { return t.blob[t.offs[i]:t.offs[i+1]] }

// str returns a copy of string i, for what leaves the snapshot.
func (t table) str(i int) string { return string(t.at(i)) }

// view returns string i without a copy. It lies in the snapshot's memory,
// which a segment's mapping may release once the snapshot is unreachable:
// it is for comparisons and lookups, never for what the snapshot returns.
func (t table) view(i int) string {
	b := t.at(i)
	return unsafe.String(unsafe.SliceData(b), len(b))
}
