package edge

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"time"

	"github.com/rappel-ca/rappel"
)

// Limits of GET /recall/changes.
const (
	defaultChanges = 100
	maxChanges     = 500
)

// changesParams are the query parameters GET /recall/changes accepts.
var changesParams = []string{"since", "limit", "lang"}

// sinceNow is the since value that starts at the last change committed.
const sinceNow = "now"

// changeCursor is a place in the change log: after the entry numbered seq
// of generation gen. On the wire it is opaque: base64url, unpadded, of a
// version byte and the two numbers, 8 bytes big-endian each. It is not
// signed: a forged one names another place in the same public log, which
// reads nothing a key could not read anyway.
type changeCursor struct{ gen, seq uint64 }

const (
	changeCursorVersion = 1
	changeCursorLen     = 17
)

func (c changeCursor) String() string {
	b := make([]byte, 0, changeCursorLen)
	b = append(b, changeCursorVersion)
	b = binary.BigEndian.AppendUint64(b, c.gen)
	b = binary.BigEndian.AppendUint64(b, c.seq)
	return base64.RawURLEncoding.EncodeToString(b)
}

// parseChangeCursor reads a cursor written by changeCursor.String, and
// reports whether it is one.
func parseChangeCursor(s string) (changeCursor, bool) {
	if len(s) != base64.RawURLEncoding.EncodedLen(changeCursorLen) {
		return changeCursor{}, false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil || len(b) != changeCursorLen || b[0] != changeCursorVersion {
		return changeCursor{}, false
	}
	return changeCursor{gen: binary.BigEndian.Uint64(b[1:9]), seq: binary.BigEndian.Uint64(b[9:])}, true
}

// changeType names a kind of change on the wire.
func changeType(kind string) string { return "recall." + kind }

// changeJSON is one entry of GET /recall/changes.
type changeJSON struct {
	Type     string          `json:"type"`
	Seq      uint64          `json:"seq"`
	At       *time.Time      `json:"at,omitempty"`
	RecordID string          `json:"record_id"`
	Record   json.RawMessage `json:"record,omitempty"`
}

// changesJSON is the response of GET /recall/changes.
type changesJSON struct {
	EntityType string       `json:"entity_type"`
	Count      int          `json:"count"`
	Changes    []changeJSON `json:"changes"`
	Next       string       `json:"next"`
	HasMore    bool         `json:"has_more"`
}

// resyncFix ends the 410s: what a client whose place is gone does.
const resyncFix = "read the dataset again with GET /recall/export and follow the changes from the cursor in its " +
	changesCursorHeader + " header (docs/api.md, \"Change feed, Atom and export\")"

// changesCursorHeader carries, on GET /recall/export, the place in the
// change log to follow the exported dataset from.
const changesCursorHeader = "Rappel-Changes-Cursor"

// getChanges answers GET /recall/changes: the entries of the store's
// change log after since, in commit order, each with the record as the
// store holds it now, and the cursor to continue from.
func (s *Server) getChanges(w http.ResponseWriter, r *http.Request) error {
	p := paramsOf(w)
	since, given := p.str("since")
	limit := p.int("limit", 1, maxChanges, defaultChanges)
	lang := p.enum("lang", rappel.Langs)
	var from changeCursor
	if given && since != sinceNow {
		var ok bool
		if from, ok = parseChangeCursor(since); !ok {
			p.invalid(rappel.InvalidValue(rappel.QueryLoc("since"), since, rappel.Reason{
				Problem: "is not a cursor of the change feed",
				Fix:     "send the 'next' value of an earlier response as it was, or 'now', or leave since out to start at the oldest change kept"}))
		}
	}
	if err := p.err(); err != nil {
		return err
	}
	if s.Changes == nil {
		return rappel.Errorf(rappel.EUNAVAILABLE, "The change feed is not available on this server; poll GET /recall instead.")
	}
	page, err := s.readChanges(r.Context(), given, since == sinceNow, from, limit)
	if err != nil {
		return err
	}
	out := changesJSON{EntityType: "recall_change", Changes: make([]changeJSON, 0, len(page.Entries))}
	next := from
	if !given || since == sinceNow {
		next = changeCursor{gen: page.Gen, seq: page.Floor}
		if since == sinceNow {
			next.seq = page.Last
		}
	}
	for _, e := range page.Entries {
		c := changeJSON{Type: changeType(e.Kind), Seq: e.Seq, RecordID: e.RecordID}
		if !e.At.IsZero() {
			at := e.At.UTC()
			c.At = &at
		}
		if e.Record != nil {
			if c.Record, err = recordJSON(e.Record, lang); err != nil {
				return err
			}
		}
		out.Changes = append(out.Changes, c)
		next.seq = e.Seq
	}
	out.Count, out.Next, out.HasMore = len(out.Changes), next.String(), next.seq < page.Last
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	writeJSON(w, r, http.StatusOK, b)
	return nil
}

// readChanges reads the page a request asks for: after from when since
// was given as a cursor, the position alone for since=now, from the
// oldest change kept without since. A cursor whose entries are gone is a
// 410, one ahead of the log a 422.
func (s *Server) readChanges(ctx context.Context, given, now bool, from changeCursor, limit int) (*rappel.ChangePage, error) {
	if !given || now {
		// The position first, then the entries of its generation; a
		// full load in between is read as it stands on the second try.
		pos, err := s.Changes.ReadChanges(ctx, 0, 0, 0)
		if err != nil {
			return nil, err
		}
		if now {
			return pos, nil
		}
		for range 2 {
			page, err := s.Changes.ReadChanges(ctx, pos.Gen, pos.Floor, limit)
			if err != nil || page.Gen == pos.Gen {
				return page, err
			}
			pos = page
		}
		return nil, rappel.Errorf(rappel.EUNAVAILABLE, "The dataset is being reloaded; retry in a minute.")
	}
	page, err := s.Changes.ReadChanges(ctx, from.gen, from.seq, limit)
	switch {
	case err != nil:
		return nil, err
	case from.gen > page.Gen || (from.gen == page.Gen && from.seq > page.Last):
		// Generations only grow: a later one, like a number past the
		// last, was never handed out here.
		return nil, rappel.Invalids(rappel.InvalidValue(rappel.QueryLoc("since"), from.String(), rappel.Reason{
			Problem: "is ahead of the last change this server has logged, so it was not issued by it",
			Fix:     "send the 'next' value this server returned, or 'now' to start from the present"}))
	case page.Gen != from.gen:
		return nil, rappel.Errorf(rappel.EGONE,
			"The cursor belongs to an earlier load of the dataset, which has been reloaded in full since, so its changes are gone; %s.", resyncFix)
	case from.seq < page.Floor:
		return nil, rappel.Errorf(rappel.EGONE,
			"The cursor is older than the oldest change this server keeps (changes are kept at least a week); %s.", resyncFix)
	}
	return page, nil
}

// recordJSON encodes rec as GET /recall/{record_id} does, with its
// translations limited to lang when lang is en or fr.
func recordJSON(rec *rappel.Record, lang string) ([]byte, error) {
	switch lang {
	case rappel.LangEN:
		c := *rec
		c.Translations.FR = nil
		rec = &c
	case rappel.LangFR:
		c := *rec
		c.Translations.EN = nil
		rec = &c
	}
	return json.Marshal(rec)
}
