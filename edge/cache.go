package edge

import (
	"encoding/binary"
	"net/http"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/rappel-ca/rappel"
)

// Cache-Control values. Never modified: responses share them.
var (
	// headerPrivateRead is for reads that need a key: a browser may keep
	// them a minute (the data refreshes every 15), but a shared cache must
	// not, or it would answer callers without a key and bypass the rate
	// limits and quotas (docs/api.md, Caching).
	headerPrivateRead = []string{"private, max-age=60"}
	// headerPublicRead is for public documents that change only with the
	// binary (the API description); clients revalidate after an hour.
	headerPublicRead = []string{"public, max-age=3600"}
	// headerNoStore is for errors, 429s, probes, writes and anything not
	// marked cacheable: none of them may be replayed from a cache.
	headerNoStore = []string{"no-store"}

	headerJSON = []string{"application/json"}
)

// cachePolicy says how writeJSON may let a successful GET or HEAD be
// cached.
type cachePolicy uint8

const (
	// cacheDefault: private when the route needs a key, no-store
	// otherwise. Public routes are probes, token links and admin calls.
	cacheDefault cachePolicy = iota
	// cachePublic marks a public document shared caches may keep.
	cachePublic
)

// setCachePublic lets the response being written to w be cached by shared
// caches (Cache-Control: public, with an ETag). For public routes whose
// body is the same for every caller, such as the API description.
func setCachePublic(w http.ResponseWriter) {
	if x := exchangeOf(w); x != nil {
		x.cache = cachePublic
	}
}

// cacheControl returns the Cache-Control of a response with status to r,
// and whether the body gets an ETag: only successful reads do.
func cacheControl(r *http.Request, x *exchange, status int) ([]string, bool) {
	if status != http.StatusOK || (r.Method != http.MethodGet && r.Method != http.MethodHead) || x == nil {
		return headerNoStore, false
	}
	switch {
	case x.cache == cachePublic:
		return headerPublicRead, true
	case x.key != nil:
		return headerPrivateRead, true
	}
	return headerNoStore, false
}

// pageETag returns the strong ETag of a search page: the xxhash of the
// dataset's version and the query string, in quotes, prefixed "p" so that it
// never equals a body hash. A page is a function of the snapshot's data and
// the query alone (lang, filters, sort, cursor), and any change of the data
// moves DatasetInfo.UpdatedAt (or, when a newer bundle replaced the data dir's
// with the same build time and count, its Bundle), so the tag is as strong
// as hashing the body,
// which for a 100-result page of a few hundred kilobytes was a fifth of the
// request's CPU. Nodes serving the same data give the same tag when they
// share --cursor-key, as they must anyway for their cursors.
func pageETag(info rappel.DatasetInfo, rawQuery string) string {
	var d xxhash.Digest
	d.Reset()
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], uint64(info.UpdatedAt.UnixNano()))
	_, _ = d.Write(buf[:])
	binary.LittleEndian.PutUint64(buf[:], uint64(info.Records))
	_, _ = d.Write(buf[:])
	_, _ = d.WriteString(info.Source)
	_, _ = d.WriteString("\x00")
	_, _ = d.WriteString(info.Bundle)
	_, _ = d.WriteString("?")
	_, _ = d.WriteString(rawQuery)
	return quotedHash('p', d.Sum64())
}

// etagOf returns the strong ETag of the body made of parts: the 64-bit
// xxhash of its bytes in hex, in quotes. Hashing costs about 0.3 µs for a
// record and 16 µs for a 100-result page, much less than encoding or
// compressing them, and, unlike a tag derived from the dataset version, it
// stays right for bodies that depend on more than the data (stats count back
// from today; a refresh that changes nothing keeps the tags).
func etagOf(parts ...[]byte) string {
	var d xxhash.Digest
	d.Reset()
	for _, p := range parts {
		_, _ = d.Write(p) // never fails
	}
	return quotedHash(0, d.Sum64())
}

// quotedHash writes sum in hex in quotes, after prefix unless it is 0.
func quotedHash(prefix byte, sum uint64) string {
	const hex = "0123456789abcdef"
	var b [19]byte
	n := 0
	b[n] = '"'
	n++
	if prefix != 0 {
		b[n] = prefix
		n++
	}
	for i := n + 15; i >= n; i-- {
		b[i] = hex[sum&0xf]
		sum >>= 4
	}
	n += 16
	b[n] = '"'
	return string(b[:n+1])
}

// taggedETag returns the ETag of the representation encoded with c: the
// coding's suffix inside the quotes of a strong tag. A weak tag already
// allows byte differences and is kept, as is a tag already suffixed.
func taggedETag(tag string, c coding) string {
	if c == identity || len(tag) < 2 || tag[0] != '"' || tag[len(tag)-1] != '"' ||
		strings.HasSuffix(tag, codingTags[c]+`"`) {
		return tag
	}
	return tag[:len(tag)-1] + codingTags[c] + `"`
}

// untaggedOpaque returns the opaque tag of an entity tag without its W/
// prefix and without a coding suffix this server adds, so that a client
// holding any encoding of a representation matches its identity tag.
func untaggedOpaque(tag string) string {
	tag = strings.TrimPrefix(tag, "W/")
	if len(tag) < 2 || tag[0] != '"' || tag[len(tag)-1] != '"' {
		return tag
	}
	for c := codingZstd; c < numCodings; c++ {
		if s := codingTags[c] + `"`; strings.HasSuffix(tag, s) {
			return tag[:len(tag)-len(s)] + `"`
		}
	}
	return tag
}

// noneMatch reports whether If-None-Match field values inm fail to match
// the current strong ETag tag (RFC 9110, section 13.1.2), so that the full
// response is due. It uses the weak comparison the RFC prescribes for
// If-None-Match and ignores coding suffixes; "*" matches any current
// representation. A malformed member matches nothing.
func noneMatch(inm []string, tag string) bool {
	for _, v := range inm {
		for v != "" {
			v = strings.TrimLeft(v, " \t,")
			if v == "" {
				break
			}
			if v[0] == '*' {
				return false
			}
			// An entity tag is W/ optionally, then a quoted string
			// without inner quotes; commas may appear inside it.
			start := 0
			if strings.HasPrefix(v, "W/") {
				start = 2
			}
			if len(v) <= start || v[start] != '"' {
				// Malformed: skip to the next comma.
				if i := strings.IndexByte(v, ','); i >= 0 {
					v = v[i+1:]
					continue
				}
				break
			}
			end := strings.IndexByte(v[start+1:], '"')
			if end < 0 {
				break
			}
			end += start + 2
			if untaggedOpaque(v[:end]) == tag {
				return false
			}
			v = v[end:]
		}
	}
	return true
}
