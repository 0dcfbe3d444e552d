package plugins

import (
	"fmt"
	"strings"
)

// DefaultMaxLoss is the share of records a candidate plugin may lose,
// compared with the active plugin on the same input, and still be
// activated.
const DefaultMaxLoss = 0.10

// Baseline is what the active plugin made of a source's last good payload:
// the record_ids it produced and how many record lines the host refused. A
// candidate is judged against it.
type Baseline struct {
	Plugin  string
	IDs     map[string]struct{}
	Refused int
}

// NewBaseline returns the baseline of plugin's verdict v.
func NewBaseline(plugin string, v *Verdict) *Baseline {
	b := &Baseline{Plugin: plugin, IDs: make(map[string]struct{}, len(v.Records)), Refused: v.Refused}
	for _, r := range v.Records {
		b.IDs[r.RecordID] = struct{}{}
	}
	return b
}

// Accept reports why a candidate whose run on the baseline's payload gave
// v must not replace the active plugin, or nil if it may. A candidate is
// refused when the host refuses more of its record lines than it refused
// of the active plugin's, or when it loses more than maxLoss of the
// record_ids the active plugin produced, or when it makes no record at
// all: the host never empties a source with a run that gave none, so such
// a plugin would serve nothing. The error is a phrase that completes "the
// candidate was not activated: ". A nil baseline (nothing to compare with)
// refuses only refused records and a run without records.
func (b *Baseline) Accept(v *Verdict, maxLoss float64) error {
	if b == nil {
		b = &Baseline{}
	}
	if len(v.Records) == 0 {
		if v.Refused > 0 {
			return fmt.Errorf("it kept nothing of its input: the host refused all %d of its records (first: %s)", v.Refused, firstRefusal(v))
		}
		return fmt.Errorf("it kept nothing of its input: it made no record, and the host never empties a source with such a run")
	}
	if v.Refused > b.Refused {
		return fmt.Errorf("the host refused %d of its records where it refused %d of the active plugin's (first: %s)", v.Refused, b.Refused, firstRefusal(v))
	}
	if len(b.IDs) == 0 {
		return nil
	}
	lost, example := b.Lost(v)
	if share := float64(lost) / float64(len(b.IDs)); share > maxLoss {
		return fmt.Errorf("it lost %d of the %d records the active plugin made from the same input (%.1f%%, more than the %.1f%% allowed), %s among them", lost, len(b.IDs), 100*share, 100*maxLoss, example)
	}
	return nil
}

// Lost counts the baseline's record_ids that v lacks, and names the first
// of them.
func (b *Baseline) Lost(v *Verdict) (lost int, example string) {
	have := make(map[string]struct{}, len(v.Records))
	for _, r := range v.Records {
		have[r.RecordID] = struct{}{}
	}
	for id := range b.IDs {
		if _, ok := have[id]; !ok {
			if lost++; example == "" || id < example {
				example = id
			}
		}
	}
	return lost, example
}

// firstRefusal names the first record line the host refused.
func firstRefusal(v *Verdict) string {
	if len(v.Refusals) == 0 {
		return "none named"
	}
	p := v.Refusals[0]
	reason := strings.TrimRight(p.Reason, ". ")
	if p.RecordID != "" {
		return p.RecordID + ": " + reason
	}
	return reason
}
