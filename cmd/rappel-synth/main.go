// Command rappel-synth writes the synthetic recall corpus the bundle is
// built from (package bundle/synth) into a directory:
//
//	rappel-synth -out DIR [-seed N] [-date YYYY-MM-DD] [-scale F]
//
// It prints the manifest's counts when done.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/rappel-ca/rappel/bundle/synth"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "rappel-synth:", err)
		}
		os.Exit(2)
	}
}

// run parses args, generates the corpus and prints its counts to stdout.
func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("rappel-synth", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "directory to write the corpus into (required)")
	seed := fs.Uint64("seed", 1, "random seed; the same seed, date and scale give the same bytes")
	date := fs.String("date", "", "reference date YYYY-MM-DD, the newest recall date (default today, UTC)")
	scale := fs.Float64("scale", 1, "size multiplier: 1 is about 41,000 records")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() > 0 {
		fs.Usage()
		return errors.New("-out DIR is required and no arguments are taken")
	}
	cfg := synth.Config{Seed: *seed, Scale: *scale}
	if *date != "" {
		t, err := time.Parse(time.DateOnly, *date)
		if err != nil {
			return fmt.Errorf("-date %q is not YYYY-MM-DD", *date)
		}
		cfg.ReferenceDate = t
	}
	start := time.Now()
	m, err := synth.Generate(*out, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "corpus in %s (seed %d, reference date %s, %s)\n", *out, m.Seed, m.ReferenceDate, time.Since(start).Round(time.Millisecond))
	keys := make([]string, 0, len(m.Counts))
	for k := range m.Counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	width := 0
	for _, k := range keys {
		width = max(width, len(k))
	}
	for _, k := range keys {
		fmt.Fprintf(stdout, "  %s%s %8d\n", k, strings.Repeat(" ", width-len(k)), m.Counts[k])
	}
	return nil
}
