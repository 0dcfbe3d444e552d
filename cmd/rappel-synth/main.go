// Command rappel-synth writes the synthetic recall corpus the bundle is
// built from (package bundle/synth) into a directory:
//
//	rappel-synth -out DIR [-seed N] [-date YYYY-MM-DD] [-scale F]
//
// It prints the manifest's counts when done. With -vrdb-size it writes
// instead one Transport Canada vehicle file of that size to the file -out
// names (synth.WriteVRDB), for measuring a refresh of the agency's
// full-size file:
//
//	rappel-synth -vrdb-size 207MB -out vrdb.csv [-vrdb-rows DAILY.csv]
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
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
	vrdbSize := fs.String("vrdb-size", "", "write only a vehicle recall file of this `size` (207MB, 40MiB, bytes) to the file -out names")
	vrdbRows := fs.String("vrdb-rows", "", "with -vrdb-size, the agency's vehicle `file` whose rows are copied, renumbered, instead of drawn ones")
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
	if *vrdbSize != "" {
		return writeVRDB(*out, *vrdbSize, *vrdbRows, cfg, stdout, start)
	}
	if *vrdbRows != "" {
		return errors.New("-vrdb-rows is for -vrdb-size")
	}
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

// writeVRDB writes a vehicle recall file of size to out.
func writeVRDB(out, size, rowsFile string, cfg synth.Config, stdout io.Writer, start time.Time) (err error) {
	n, err := parseSize(size)
	if err != nil {
		return err
	}
	var rows []byte
	if rowsFile != "" {
		if rows, err = os.ReadFile(rowsFile); err != nil {
			return err
		}
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	c, err := synth.WriteVRDB(f, cfg, n, rows)
	if err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	fmt.Fprintf(stdout, "vehicle file %s: %d bytes, %d rows, %d recalls (%s)\n", out, c.Bytes, c.Rows, c.Recalls, time.Since(start).Round(time.Millisecond))
	return nil
}

// parseSize reads a size in bytes, or with a unit: kB, MB, GB (powers of
// 1000) or KiB, MiB, GiB (of 1024).
func parseSize(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}
	num, mult := strings.TrimSpace(s), 1.0
	for _, u := range units {
		if strings.HasSuffix(num, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(num, u.suffix)), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v <= 0 || v*mult > 1<<40 {
		return 0, fmt.Errorf("-vrdb-size %q is not a size such as 207MB, 40MiB or 1000000", s)
	}
	return int64(v * mult), nil
}
