package index

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math"
	"strings"

	"github.com/rappel-ca/rappel"
)

// A cursor names the last record of a page by its place in the order: the
// sort key value (or relevance score) and the record_id. Positions are not
// used, so a cursor stays valid across a refresh: the next page starts
// after that place in the new snapshot, and no record present before and
// after is repeated or skipped.
//
// Wire form, base64url without padding:
//
//	version (1) | query hash (8) | key (8, big endian; float64 bits for relevance) |
//	record_id | HMAC-SHA256 of all before it, first 12 bytes
type cursor struct {
	hash  uint64
	key   int64
	score float64
	id    string
}

const (
	cursorVersion = 1
	cursorMACLen  = 12
	cursorHead    = 1 + 8 + 8
)

// queryHash binds a cursor to what selects and orders the results: q,
// filters, dates and sort. Limit and lang may change between pages.
func queryHash(q *rappel.Search) uint64 {
	h := sha256.New()
	parts := []string{q.Query.String()}
	// A filter counts when set, by its name: adding a filter to the table
	// leaves the cursors of searches without it valid.
	for i := range rappel.Filters {
		if v := *rappel.Filters[i].Of(&q.FilterValues); v != "" {
			parts = append(parts, rappel.Filters[i].Param+"="+v)
		}
	}
	for _, part := range append(parts, q.IssuedAfter, q.IssuedBefore, sortOf(q)) {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	if q.Ascending {
		h.Write([]byte{1})
	}
	// Typos and prefixes change what matches.
	if q.NoTypos {
		h.Write([]byte{2})
	}
	if q.PrefixLast {
		h.Write([]byte{3})
	}
	return binary.BigEndian.Uint64(h.Sum(nil))
}

func sortOf(q *rappel.Search) string {
	if q.SortBy == "" {
		return rappel.SortDate
	}
	return q.SortBy
}

func (s *Snapshot) encodeCursor(c cursor, relevance bool) string {
	b := make([]byte, cursorHead, cursorHead+len(c.id)+cursorMACLen)
	b[0] = cursorVersion
	binary.BigEndian.PutUint64(b[1:], c.hash)
	k := uint64(c.key)
	if relevance {
		k = math.Float64bits(c.score)
	}
	binary.BigEndian.PutUint64(b[9:], k)
	b = append(b, c.id...)
	b = append(b, s.mac(b)...)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (s *Snapshot) mac(b []byte) []byte {
	m := hmac.New(sha256.New, s.cursorKey)
	m.Write(b)
	return m.Sum(nil)[:cursorMACLen]
}

var errCursorFormat = errors.New("malformed")

// decodeCursor checks a client's cursor and returns it, or a 400 *Error
// saying what is wrong and what to do.
func (s *Snapshot) decodeCursor(raw string, q *rappel.Search, relevance bool) (cursor, error) {
	if len(raw) > 512 || strings.ContainsAny(raw, "+/=") {
		return cursor{}, rappel.BadCursor("is not one this API issued")
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil || len(b) < cursorHead+cursorMACLen || b[0] != cursorVersion {
		return cursor{}, rappel.BadCursor("is not one this API issued")
	}
	body, mac := b[:len(b)-cursorMACLen], b[len(b)-cursorMACLen:]
	if !hmac.Equal(mac, s.mac(body)) {
		return cursor{}, rappel.BadCursor("has been altered or was issued by another deployment")
	}
	c := cursor{hash: binary.BigEndian.Uint64(body[1:]), id: string(body[cursorHead:])}
	k := binary.BigEndian.Uint64(body[9:])
	if relevance {
		c.score = math.Float64frombits(k)
	} else {
		c.key = int64(k)
	}
	if c.hash != queryHash(q) {
		return cursor{}, rappel.BadCursor("belongs to a different search (q, filters or sort changed)")
	}
	return c, nil
}
