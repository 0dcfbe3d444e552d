package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/rappel-ca/rappel"
)

// answers keeps the JSON of the lookups' results (GET /recall/vin and GET
// /recall/upc), so that a vehicle or a barcode asked for again costs its
// request no store scan, no summaries and no encoding: the results depend
// only on what the request is reduced to (a decoded make, model and year;
// a GTIN-14) and its lang, and on the data, which the key of the set of
// answers names: the catalog's snapshot and the store's change log
// position. A write to the store or a new snapshot starts an empty set.
// A Lookup that cannot tell its position (changePositioner) is asked every
// time.
type answers struct {
	cur atomic.Pointer[answerSet]
}

// answerSet is the answers computed against one snapshot and one store
// position.
type answerSet struct {
	snap     rappel.Snapshot // a pointer: compared by identity
	gen, seq uint64
	mu       sync.RWMutex
	m        map[string][]byte // key (answerKey) → the answer's tail; never modified once stored
	size     int               // bytes of m's keys and values
}

// maxAnswers and maxAnswerBytes bound one set: the vehicles of a dataset
// are a few thousand make, model and year triples, some with hundreds of
// recalls, and a client can send any number of barcodes; past either
// bound the set starts again empty, so that what is asked for now is what
// it holds.
const (
	maxAnswers     = 8192
	maxAnswerBytes = 32 << 20
)

// changePositioner is the part of a Lookup that says where its data is: the
// store's generation and the number of its last change (kv.Store). A
// change to any record moves it.
type changePositioner interface {
	ChangeSeq(ctx context.Context) (gen, seq uint64, err error)
}

// set returns the set of answers valid for snap and look's data now, or
// nil when look cannot tell its position: the caller then asks look.
func (a *answers) set(ctx context.Context, look rappel.Lookup, snap rappel.Snapshot) *answerSet {
	cp, ok := look.(changePositioner)
	if !ok {
		return nil
	}
	gen, seq, err := cp.ChangeSeq(ctx)
	if err != nil {
		return nil // the lookup itself will say what is wrong
	}
	// cur.snap is only ever a pointer, so comparing it with any snapshot
	// cannot panic.
	if cur := a.cur.Load(); cur != nil && cur.snap == snap && cur.gen == gen && cur.seq == seq {
		return cur
	}
	if reflect.TypeOf(snap).Kind() != reflect.Pointer {
		return nil
	}
	// Two requests that both find the set stale each start one; the one
	// stored last stays, and the other's answers are lost, not wrong.
	s := &answerSet{snap: snap, gen: gen, seq: seq, m: map[string][]byte{}}
	a.cur.Store(s)
	return s
}

// get returns the answer stored under key, if any. A nil set holds none.
func (s *answerSet) get(key []byte) ([]byte, bool) {
	if s == nil {
		return nil, false
	}
	s.mu.RLock()
	b, ok := s.m[string(key)] // no allocation: the compiler looks up without converting
	s.mu.RUnlock()
	return b, ok
}

// put stores b under key; b must not change afterwards.
func (s *answerSet) put(key []byte, b []byte) {
	if s == nil {
		return
	}
	n := len(key) + len(b)
	s.mu.Lock()
	if len(s.m) >= maxAnswers || s.size+n > maxAnswerBytes {
		s.m, s.size = map[string][]byte{}, 0
	}
	if _, ok := s.m[string(key)]; !ok {
		s.m[string(key)] = b
		s.size += n
	}
	s.mu.Unlock()
}

// answerKey appends the parts of a key, each followed by a 0 byte (which
// none of them holds: makes, models, GTINs and lang codes are text).
func answerKey(dst []byte, parts ...string) []byte {
	for _, p := range parts {
		dst = append(dst, p...)
		dst = append(dst, 0)
	}
	return dst
}

// answerTail is the JSON of v after its leading fields, which the caller
// writes per request: json.Marshal of v, whose leading fields are empty
// strings, less head, the bytes those fields encode to (`{"vin":"",`).
// Encoding the tail with json.Marshal keeps the body byte for byte what
// encoding the whole answer gives.
func answerTail(v any, head string) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(b, []byte(head)) {
		// A field renamed or moved without changing head: a programming
		// mistake the lookup tests catch; an error (a 500 with its
		// sentence) rather than a panic, should one ship.
		return nil, fmt.Errorf("edge: a lookup's answer is encoded as %.40q, not %q first", b, head)
	}
	return b[len(head):], nil
}

// appendJSONField appends "name":value, as encoding/json writes a string
// field, then a comma.
func appendJSONField(dst []byte, name, value string) []byte {
	dst = append(dst, '"')
	dst = append(dst, name...)
	dst = append(dst, '"', ':')
	dst = appendJSONString(dst, value)
	return append(dst, ',')
}

// appendJSONString appends s quoted as encoding/json quotes it. The
// values here (a parsed VIN, a barcode as given and its digits) are
// nearly always plain letters, digits, spaces and dashes, written as they
// are; anything else goes through encoding/json.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		plain := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == ' ' || c == '-'
		if !plain {
			b, _ := json.Marshal(s) // a string always encodes
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
