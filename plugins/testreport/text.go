package testreport

import (
	"fmt"
	"io"

	"github.com/rappel-ca/rappel/plugins"
)

// WriteText writes rep as text: with log, the plugin's log lines, and
// with diff, what the candidate changed against the plugin it was
// compared with.
func (rep *Report) WriteText(w io.Writer, diff, log bool) {
	kind := "complete records (each must be servable alone)"
	if rep.Partial {
		kind = "partial records (checked for the fields they have)"
	}
	fmt.Fprintf(w, "plugin    %s (sha256 %s)\n", rep.Plugin, short(rep.SHA256))
	fmt.Fprintf(w, "source    %s: %s\n", rep.Source, kind)
	fmt.Fprintf(w, "input     %s: %d files, %d bytes\n", rep.Input, rep.InputFiles, rep.InputBytes)
	fmt.Fprintf(w, "signature %s\n", rep.Signature)
	fmt.Fprintf(w, "run       %.2fs (stop: %s)\n", rep.Duration, rep.Stop)
	fmt.Fprintf(w, "records   %d accepted, %d refused by the host\n", rep.Accepted, rep.Refused)
	fmt.Fprintf(w, "problems  %d\n", len(rep.Problems))
	for i, p := range rep.Problems {
		if i == 20 {
			fmt.Fprintf(w, "          … %d more (--json lists them all)\n", len(rep.Problems)-i)
			break
		}
		id := p.RecordID
		if id == "" {
			id = "-"
		}
		fmt.Fprintf(w, "  %-14s %s\n", id, p.Reason)
	}
	if log {
		fmt.Fprintf(w, "log       %d lines\n", len(rep.Log))
		for _, line := range rep.Log {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
	if a := rep.Against; a != nil && a.Failed != "" {
		fmt.Fprintf(w, "compared  with %s (sha256 %s), which failed on this input: %s\n          as the server would on such a payload, the candidate is judged alone\n", a.Plugin, short(a.SHA256), a.Failed)
	} else if a != nil {
		fmt.Fprintf(w, "compared  with %s (sha256 %s, %.2fs): %d accepted, %d refused; the candidate lacks %d of them\n",
			a.Plugin, short(a.SHA256), a.Duration, a.Accepted, a.Refused, a.Lost)
		if diff {
			printDiff(w, a.Diff)
		}
	}
	switch rep.Verdict {
	case "accepted":
		fmt.Fprintln(w, "verdict   accepted: the host would activate this plugin")
	case "held":
		fmt.Fprintf(w, "verdict   held: %s; the server would activate it only once its sha256 is approved (POST /admin/plugins/%s/approve)\n", rep.Reason, rep.Source)
	default:
		fmt.Fprintf(w, "verdict   rejected: %s\n", rep.Reason)
	}
}

// printDiff writes what the candidate changed, field by field, with a few
// record_ids each.
func printDiff(w io.Writer, d plugins.DiffSummary) {
	fmt.Fprintf(w, "diff      %d records compared; %d gained %v, %d lost %v\n", d.Compared, d.Gained, d.GainedExamples, d.Lost, d.LostExamples)
	for _, f := range d.Fields {
		share := 0.0
		if d.Compared > 0 {
			share = 100 * float64(f.Changed) / float64(d.Compared)
		}
		fmt.Fprintf(w, "  %-18s %5d changed (%5.1f%%) %v\n", f.Field, f.Changed, share, f.Examples)
	}
}

// short is a digest cut for a line of text.
func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12] + "…"
	}
	return sha
}
