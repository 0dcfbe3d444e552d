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
	Rappel map[string]float64
	Bare   map[string]float64
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

var writtenAt = regexp.MustCompile("on [0-9-]+ [0-9:]+ UTC, commit ([0-9a-f]+)")

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
		"Each class's rappel ÷ bare throughput in this run and in the report this one replaced (commit %s): the bare handler, measured in the same rounds, stands for the machine, so that the change is rappel's. "+
		"Goal: no class slower by more than %.0f%%.\n\n", orDash(res.Previous.Commit), goalNoSlower*100)
	header(b, "class", "÷ bare, this run", "÷ bare, previous run", "change", "goal")
	for _, cr := range res.Classes {
		now, then, change, ok := againstPrevious(res, cr)
		if !ok {
			row(b, cr.Class.Label, fmtRatio(ratio(median(cr.RPS["rappel"]), median(cr.RPS["bare"]))), "—", "—", "(not in the previous run)")
			continue
		}
		v := "met"
		if change < -goalNoSlower {
			v = fmt.Sprintf("**missed: %.0f%% slower**", -change*100)
		}
		row(b, cr.Class.Label, fmtRatio(now), fmtRatio(then), fmt.Sprintf("%+.0f%%", change*100), v)
	}
	b.WriteString("\n")
}

// previousMissed lists the classes slower than in the previous run by
// more than the goal allows.
func previousMissed(res *Results) []string {
	var missed []string
	for _, cr := range res.Classes {
		if _, _, change, ok := againstPrevious(res, cr); ok && change < -goalNoSlower {
			missed = append(missed, fmt.Sprintf("%s throughput (÷ bare) is %.0f%% below the previous run's (goal: at most %.0f%%)", cr.Class.Label, -change*100, goalNoSlower*100))
		}
	}
	return missed
}
