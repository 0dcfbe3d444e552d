package kv

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// Table prefixes; see the key layout in the package doc.
const (
	recordPrefix = "r/"
	indexPrefix  = "i/"
	metaPrefix   = "m/"
	// changePrefix is the change log: c/<seq, 8 bytes big-endian>, so
	// that key order is sequence order and the last entry is one seek
	// away.
	changePrefix = "c/"
)

// Meta keys.
var (
	schemaKey  = []byte(metaPrefix + "schema")
	datasetKey = []byte(metaPrefix + "dataset")
	// changesKey holds the change log's generation and floor (changes.go).
	changesKey = []byte(metaPrefix + "changes")
	// indexStateKey holds the read index's own state (PutIndexState).
	indexStateKey = []byte(metaPrefix + "indexstate")
)

// Value escaping: 0x00 inside a value becomes 0x00 0xFF and every value ends
// with 0x00 0x01.
const (
	escByte     = 0x00
	escEscaped  = 0xFF
	escTerminal = 0x01
)

// recordKey is r/<id>.
func recordKey(id string) []byte {
	k := make([]byte, 0, len(recordPrefix)+len(id))
	return append(append(k, recordPrefix...), id...)
}

// recordKeyID returns the record_id of a record key.
func recordKeyID(key []byte) string { return string(key[len(recordPrefix):]) }

// changeKey is c/<seq, 8 bytes big-endian>.
func changeKey(seq uint64) []byte {
	return binary.BigEndian.AppendUint64(append(make([]byte, 0, len(changePrefix)+8), changePrefix...), seq)
}

// changeKeySeq returns the sequence number of a change log key.
func changeKeySeq(key []byte) (uint64, error) {
	rest, ok := bytes.CutPrefix(key, []byte(changePrefix))
	if !ok || len(rest) != 8 {
		return 0, fmt.Errorf("decoding change log key %q: %w", key, errBadKey)
	}
	return binary.BigEndian.Uint64(rest), nil
}

// indexKeyPrefix is i/<field>/ followed by each value escaped and
// terminated. Given all of a field's values it is the prefix shared by the
// index keys of exactly those values; given fewer, by every key whose
// leading values are those.
func indexKeyPrefix(field string, values ...string) []byte {
	n := len(indexPrefix) + len(field) + 1
	for _, v := range values {
		n += len(v) + 2
	}
	k := make([]byte, 0, n)
	k = append(k, indexPrefix...)
	k = append(k, field...)
	k = append(k, '/')
	for _, v := range values {
		k = appendValue(k, v)
	}
	return k
}

// indexKey is the key saying that record id has values for field.
func indexKey(field string, values []string, id string) []byte {
	return append(indexKeyPrefix(field, values...), id...)
}

// appendValue appends v escaped and terminated.
func appendValue(k []byte, v string) []byte {
	for {
		i := indexNUL(v)
		if i < 0 {
			break
		}
		k = append(k, v[:i]...)
		k = append(k, escByte, escEscaped)
		v = v[i+1:]
	}
	k = append(k, v...)
	return append(k, escByte, escTerminal)
}

func indexNUL(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == escByte {
			return i
		}
	}
	return -1
}

var errBadKey = errors.New("malformed key")

// decodeIndexKey splits an index key into its field, its n values and the
// record_id. It is the inverse of indexKey, used to check the index and by
// tests; lookups only cut the record_id off a known prefix.
func decodeIndexKey(key []byte, n int) (field string, values []string, id string, err error) {
	rest, ok := bytes.CutPrefix(key, []byte(indexPrefix))
	if !ok {
		return "", nil, "", fmt.Errorf("decoding %q: %w", key, errBadKey)
	}
	slash := bytes.IndexByte(rest, '/')
	if slash < 0 {
		return "", nil, "", fmt.Errorf("decoding %q: %w", key, errBadKey)
	}
	field, rest = string(rest[:slash]), rest[slash+1:]
	values = make([]string, 0, n)
	for range n {
		var v []byte
		v, rest, ok = cutValue(rest)
		if !ok {
			return "", nil, "", fmt.Errorf("decoding %q: %w", key, errBadKey)
		}
		values = append(values, string(v))
	}
	return field, values, string(rest), nil
}

// cutValue unescapes the value at the start of b and returns it with what
// follows its terminator.
func cutValue(b []byte) (v, rest []byte, ok bool) {
	for {
		i := bytes.IndexByte(b, escByte)
		if i < 0 || i+1 == len(b) {
			return nil, nil, false
		}
		v = append(v, b[:i]...)
		switch b[i+1] {
		case escTerminal:
			if v == nil {
				v = []byte{}
			}
			return v, b[i+2:], true
		case escEscaped:
			v = append(v, escByte)
			b = b[i+2:]
		default:
			return nil, nil, false
		}
	}
}

// prefixEnd is the smallest key greater than every key starting with p, for
// an iterator's UpperBound; nil when there is none (p is all 0xFF).
func prefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}
