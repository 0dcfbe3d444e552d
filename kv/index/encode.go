package index

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/rappel-ca/rappel"
)

// encoded holds every record's JSON in one arena, cut around the value of
// "translations" so that any language variant is spliced from the same
// bytes: prefix (up to and including `"translations":`), the English and
// French translation objects, and the suffix. Memory is one copy of the
// JSON rather than one per variant.
type encoded struct {
	arena []byte
	// offs[5*doc : 5*doc+5] are the starts of prefix, en, fr, suffix, and
	// the end.
	offs []uint32
	// spilled is how many bytes before arena a streamed build wrote out
	// (streambuild.go): offs count them, arena holds what follows.
	spilled int64
}

// end is the offset of the end of the arena.
func (e *encoded) end() uint32 { return uint32(e.spilled + int64(len(e.arena))) }

var translationsKey = []byte(`"translations":{}`)

// add encodes r as the next document.
func (e *encoded) add(r *rappel.Record) error {
	bare := *r
	bare.Translations = rappel.Translations{}
	b, err := json.Marshal(&bare)
	if err != nil {
		return fmt.Errorf("encoding record %q: %w", r.RecordID, err)
	}
	// Quotes inside string values are escaped, so the key can only match
	// where it is the key.
	i := bytes.Index(b, translationsKey)
	if i < 0 {
		return fmt.Errorf("encoding record %q: no translations key", r.RecordID)
	}
	cut := i + len(`"translations":`)
	e.offs = append(e.offs, e.end())
	e.arena = append(e.arena, b[:cut]...)
	for _, tr := range []*rappel.Translation{r.Translations.EN, r.Translations.FR} {
		e.offs = append(e.offs, e.end())
		if tr != nil {
			tb, err := json.Marshal(tr)
			if err != nil {
				return fmt.Errorf("encoding record %q: %w", r.RecordID, err)
			}
			e.arena = append(e.arena, tb...)
		}
	}
	e.offs = append(e.offs, e.end())
	e.arena = append(e.arena, b[cut+2:]...)
	e.offs = append(e.offs, e.end())
	return nil
}

// appendDoc appends doc's JSON in the variant for lang ("" for both
// languages) to dst.
func (e *encoded) appendDoc(dst []byte, doc int32, lang string) []byte {
	o := e.offs[5*doc : 5*doc+5]
	dst = append(dst, e.arena[o[0]:o[1]]...)
	dst = append(dst, '{')
	en, fr := e.arena[o[1]:o[2]], e.arena[o[2]:o[3]]
	wrote := false
	if lang != rappel.LangFR && len(en) > 0 {
		dst = append(dst, `"en":`...)
		dst = append(dst, en...)
		wrote = true
	}
	if lang != rappel.LangEN && len(fr) > 0 {
		if wrote {
			dst = append(dst, ',')
		}
		dst = append(dst, `"fr":`...)
		dst = append(dst, fr...)
	}
	dst = append(dst, '}')
	return append(dst, e.arena[o[3]:o[4]]...)
}

// size is the length of doc's JSON with both languages, a capacity hint.
func (e *encoded) size(doc int32) int {
	return int(e.offs[5*doc+4]-e.offs[5*doc]) + 16
}
