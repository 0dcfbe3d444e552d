package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		dir := t.TempDir()
		var out, errs bytes.Buffer
		if err := run([]string{"-out", dir, "-seed", "9", "-date", "2024-03-01", "-scale", "0.01"}, &out, &errs); err != nil {
			t.Fatalf("run: %v (%s)", err, errs.String())
		}
		for _, want := range []string{"seed 9", "reference date 2024-03-01", "records", "vehicle"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("output lacks %q:\n%s", want, out.String())
			}
		}
		for _, f := range []string{"manifest.json", "hc/recalls-en.json", "hc/recalls-fr.json", "tc/vrdb.csv"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Error(err)
			}
		}
	})
	t.Run("ErrUsage", func(t *testing.T) {
		for _, args := range [][]string{{}, {"-out", t.TempDir(), "-date", "2024-13-01"}, {"-out", t.TempDir(), "-scale", "-2"}, {"-bogus"}} {
			var out, errs bytes.Buffer
			if err := run(args, &out, &errs); err == nil {
				t.Errorf("run(%q) succeeded", args)
			}
		}
	})
}
