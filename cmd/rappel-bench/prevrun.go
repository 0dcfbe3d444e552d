package main

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// goalNoSlower is the most a class's throughput may fall against the
// previous run's, judged on rappel ÷ bare so that a machine busier or
// quieter than the last time does not count as a change of rappel's.
const goalNoSlower = 0.05

// PreviousRun is what the report being replaced said of throughput: its
// commit and, by class label, rappel's and the bare handler's requests/s.
type PreviousRun struct {
	Commit string
	// Machine is its "Machine:" line up to the Go version: CPU, CPUs,
	// memory and kernel.
	Machine string
	Rappel  map[string]float64
	Bare    map[string]float64
}

// machineLine is what the report says of the machine (CPU, CPUs, memory,
// kernel), as readPreviousRun keeps it.
func machineLine(e Env) string {
	return fmt.Sprintf("%s, %d CPUs, %d MiB, Linux %s", orDash(e.CPU), e.CPUs, e.MemMiB, orDash(e.Kernel))
}

// sameMachine says whether the previous run was on the machine of res:
// only then is the change its goal judges rappel's. The bare handler
// does not stand for another machine: on a faster network stack it gains
// more than the searches, which are computation.
func sameMachine(res *Results) bool {
	return res.Previous != nil && res.Previous.Machine == machineLine(res.Env)
}

// readPreviousRun parses the throughput table of the section between the
// markers of the report at path, nil when there is none.
func readPreviousRun(path string) *PreviousRun {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return parsePreviousRun(string(b))
}

var (
	writtenAt   = regexp.MustCompile("on [0-9-]+ [0-9:]+ UTC, commit ([0-9a-f]+)")
	machineSaid = regexp.MustCompile("(?m)^Machine: ([^;]+);")
)

func parsePreviousRun(doc string) *PreviousRun {
	i := strings.Index(doc, beginMarker)
	j := strings.Index(doc, endMarker)
	if i < 0 || j < i {
		return nil
	}
	section := doc[i:j]
	p := &PreviousRun{Rappel: map[string]float64{}, Bare: map[string]float64{}}
	if m := writtenAt.FindStringSubmatch(section); m != nil {
		p.Commit = m[1]
	}
	if m := machineSaid.FindStringSubmatch(section); m != nil {
		p.Machine = m[1]
	}
	k := strings.Index(section, "### Throughput (requests/s, wrk)")
	if k < 0 {
		return nil
	}
	rappelCol, bareCol := -1, -1
	for _, line := range strings.Split(section[k:], "\n")[1:] {
		if strings.HasPrefix(line, "###") {
			break
		}
		cells := tableCells(line)
		if len(cells) == 0 || strings.HasPrefix(cells[0], "---") {
			continue
		}
		if cells[0] == "class" {
			for c, name := range cells {
				switch name {
				case "rappel":
					rappelCol = c
				case "bare":
					bareCol = c
				}
			}
			continue
		}
		if rappelCol < 0 || bareCol < 0 || len(cells) <= max(rappelCol, bareCol) {
			continue
		}
		r, rok := parseRPS(cells[rappelCol])
		bare, bok := parseRPS(cells[bareCol])
		if rok && bok {
			p.Rappel[cells[0]], p.Bare[cells[0]] = r, bare
		}
	}
	if len(p.Rappel) == 0 {
		return nil
	}
	return p
}

// tableCells splits a Markdown table row into its trimmed cells.
func tableCells(line string) []string {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "|") || !strings.HasSuffix(line, "|") || len(line) < 2 {
		return nil
	}
	cells := strings.Split(line[1:len(line)-1], "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

// parseRPS reads a figure as fmtRPS writes it: "17,462", "35.5".
func parseRPS(s string) (float64, bool) {
	v, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
	return v, err == nil && v > 0
}

// againstPrevious returns, for a class, rappel ÷ bare in this run and in
// the previous one, and the change (now ÷ then - 1); ok false when either
// run lacks the class.
func againstPrevious(res *Results, cr *ClassResult) (now, then, change float64, ok bool) {
	p := res.Previous
	if p == nil {
		return 0, 0, 0, false
	}
	now = ratio(median(cr.RPS["rappel"]), median(cr.RPS["bare"]))
	then = ratio(p.Rappel[cr.Class.Label], p.Bare[cr.Class.Label])
	if math.IsNaN(now) || math.IsNaN(then) {
		return 0, 0, 0, false
	}
	return now, then, now/then - 1, true
}

// renderPrevious writes each class's throughput against the previous
// run's.
func renderPrevious(b *strings.Builder, res *Results) {
	if res.Previous == nil {
		return
	}
	fmt.Fprintf(b, "### Against the previous run\n\n"+
		"Each class's throughput in this run and in the report this one replaced (commit %s), and rappel ÷ bare in each: the bare handler, measured in the same rounds, stands for the machine's noise, so that the change is rappel's. "+
		"Goal: no class slower by more than %.0f%%, judged on rappel ÷ bare when both runs were on the same machine. ", orDash(res.Previous.Commit), goalNoSlower*100)
	same := sameMachine(res)
	if same {
		b.WriteString("Both runs were on the same machine.\n\n")
	} else {
		fmt.Fprintf(b, "**Not judged**: the previous run was on another machine (%s; this one: %s). "+
			"The bare handler, all network stack, changed more between the two machines than the searches, which are computation, so rappel ÷ bare cannot tell rappel's change from the machine's; the figures are shown for information.\n\n",
			orDash(res.Previous.Machine), machineLine(res.Env))
	}
	header(b, "class", "rappel req/s, this run / previous", "bare req/s, this run / previous", "÷ bare, this run / previous", "change", "goal")
	for _, cr := range res.Classes {
		label := cr.Class.Label
		now, then, change, ok := againstPrevious(res, cr)
		if !ok {
			row(b, label, fmtRPS(median(cr.RPS["rappel"]))+" / —", fmtRPS(median(cr.RPS["bare"]))+" / —", "—", "—", "(not in the previous run)")
			continue
		}
		v := "met"
		switch {
		case !same:
			v = "(not judged: another machine)"
		case change < -goalNoSlower:
			v = fmt.Sprintf("**missed: %.0f%% slower**", -change*100)
		}
		row(b, label, fmtRPS(median(cr.RPS["rappel"]))+" / "+fmtRPS(res.Previous.Rappel[label]),
			fmtRPS(median(cr.RPS["bare"]))+" / "+fmtRPS(res.Previous.Bare[label]),
			fmtRatio(now)+" / "+fmtRatio(then), fmt.Sprintf("%+.0f%%", change*100), v)
	}
	b.WriteString("\n")
}

// previousMissed lists the classes slower than in the previous run by
// more than the goal allows, or says the goal could not be judged.
func previousMissed(res *Results) (missed, unjudged []string) {
	if res.Previous == nil {
		return nil, nil
	}
	if !sameMachine(res) {
		return nil, []string{"no class slower than the previous run (it was on another machine)"}
	}
	for _, cr := range res.Classes {
		if _, _, change, ok := againstPrevious(res, cr); ok && change < -goalNoSlower {
			missed = append(missed, fmt.Sprintf("%s throughput (÷ bare) is %.0f%% below the previous run's (goal: at most %.0f%%)", cr.Class.Label, -change*100, goalNoSlower*100))
		}
	}
	return missed, nil
}
