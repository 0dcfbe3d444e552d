package plugins

import (
	"fmt"
	"time"

	"github.com/rappel-ca/rappel"
)

// DefaultPartial returns the shipped sources whose records are not
// servable alone and are completed by another source's (see
// rappel.Assemble and testdata/FORMATS.md): a detail document only enriches
// a notice; the dump's Transport Canada rows take their dates from the
// vehicle CSV, and its other rows without "Last updated" take theirs from
// the detail documents. Any other source's records must be complete.
func DefaultPartial() map[string]bool {
	return map[string]bool{"detail": true, "hcdump": true}
}

// Verdict is how the host judged one run's records.
type Verdict struct {
	// Records are the records the host accepted, with fetched_at cleared:
	// the host, not the plugin, says when a record was fetched.
	Records []*rappel.Record
	// Problems are the guest's own problem lines and every record line the
	// host refused, with the reason.
	Problems []rappel.Problem
	// Refusals are the record lines the host refused, not decodable or not
	// valid, also listed in Problems.
	Refusals []rappel.Problem
	// Refused counts the record lines the host refused, including lines
	// past MaxRecords, which have one Refusal between them.
	Refused int
}

// Judge validates every record of res as the host does before accepting
// it. A complete record must pass rappel.Record.Validate; a partial one
// (partial true) must pass it once the required fields another source
// provides are filled in, which checks the record_id and the vocabulary
// and format of every field it has.
func Judge(source string, res *Result, partial bool) *Verdict {
	v := &Verdict{Problems: append([]rappel.Problem(nil), res.Problems...), Refusals: append([]rappel.Problem(nil), res.Refusals...)}
	v.Records = make([]*rappel.Record, 0, len(res.Records))
	v.Refused = res.Lines - len(res.Records)
	stamp := time.Unix(0, 0).UTC().Format(time.RFC3339)
	for _, r := range res.Records {
		r.FetchedAt = ""
		c := *r
		c.FetchedAt = stamp
		if partial {
			fillRequired(&c)
		}
		if err := c.Validate(); err != nil {
			p := rappel.Problem{Source: source, RecordID: r.RecordID, Reason: fmt.Sprintf("The host refused the record: %v.", err)}
			v.Refused++
			v.Problems = append(v.Problems, p)
			v.Refusals = append(v.Refusals, p)
			continue
		}
		v.Records = append(v.Records, r)
	}
	return v
}

// fillRequired gives every missing required field of a partial record a
// valid stand-in, so that Validate judges only the fields it has.
func fillRequired(r *rappel.Record) {
	if r.RecallID == "" {
		r.RecallID = "partial"
	}
	if r.RecallType == "" {
		r.RecallType = rappel.TypeFood
	}
	if r.Agency == "" {
		r.Agency = rappel.AgencyCFIA
	}
	if r.Status == "" {
		r.Status = rappel.StatusActive
	}
	if r.EventDate == "" {
		r.EventDate = "2000-01-01"
	}
	if r.RecallDate == "" {
		r.RecallDate = "2000-01-01"
	}
	if r.Translations.EN == nil && r.Translations.FR == nil {
		r.Translations.EN = &rappel.Translation{}
	}
}

// Summary is a one-line account of a verdict, for logs and the command line.
func (v *Verdict) Summary() string {
	return fmt.Sprintf("%d records accepted, %d refused, %d problems", len(v.Records), v.Refused, len(v.Problems))
}
