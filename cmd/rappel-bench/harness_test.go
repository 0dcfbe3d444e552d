package main

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestHarness_ParseFlags(t *testing.T) {
	t.Run("Quick", func(t *testing.T) {
		h := NewHarness()
		h.Stderr = io.Discard
		if err := h.ParseFlags([]string{"-quick", "-rounds", "2"}); err != nil {
			t.Fatal(err)
		}
		if h.Rounds != 2 || h.WrkDur != time.Second || h.Startups != 1 || !slices.Equal(h.Scales, []float64{1}) {
			t.Errorf("-quick -rounds 2: rounds %d, wrk %s, startups %d, scales %v; want the given rounds and quick defaults otherwise",
				h.Rounds, h.WrkDur, h.Startups, h.Scales)
		}
	})
	t.Run("Full", func(t *testing.T) {
		h := NewHarness()
		h.Stderr = io.Discard
		if err := h.ParseFlags([]string{"-systems", "rappel,postgres", "-scales", "1,2.5"}); err != nil {
			t.Fatal(err)
		}
		if h.Rounds != 5 || !slices.Equal(h.Systems, []string{"rappel", "postgres"}) || !slices.Equal(h.Scales, []float64{1, 2.5}) {
			t.Errorf("rounds %d, systems %v, scales %v", h.Rounds, h.Systems, h.Scales)
		}
	})
	t.Run("ErrUsage", func(t *testing.T) {
		for _, args := range [][]string{
			{"-systems", "rappel,mysql"}, {"-systems", "bare,rappel"}, {"-scales", "1,-2"}, {"-rounds", "0"}, {"-wrk-duration", "500ms"}, {"extra"},
		} {
			h := NewHarness()
			h.Stderr = io.Discard
			if err := h.ParseFlags(args); err == nil {
				t.Errorf("ParseFlags(%q) succeeded", args)
			}
		}
	})
}

// TestHarness_Repo checks that the harness, run from its own module, finds
// the rappel repository above it and puts its outputs there by default.
func TestHarness_Repo(t *testing.T) {
	want, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	h := NewHarness()
	h.Stderr = io.Discard
	if err := h.ParseFlags(nil); err != nil {
		t.Fatal(err)
	}
	if h.Repo != want || h.WorkDir != filepath.Join(want, "build", "bench") || h.Out != filepath.Join(want, "BENCHMARKS.md") {
		t.Errorf("repo %s, work %s, out %s; want %s and its build/bench and BENCHMARKS.md", h.Repo, h.WorkDir, h.Out, want)
	}
	h = NewHarness()
	h.Stderr = io.Discard
	if err := h.ParseFlags([]string{"-work", "w", "-out", ""}); err != nil {
		t.Fatal(err)
	}
	if h.WorkDir != "w" || h.Out != "" {
		t.Errorf("-work w -out '': work %q, out %q", h.WorkDir, h.Out)
	}
	if dir, err := findRepo(t.TempDir()); err == nil || !strings.Contains(err.Error(), "-repo") {
		t.Errorf("findRepo outside the repository: %q, %v; want an error pointing to -repo", dir, err)
	}
}

// TestHarness_CheckTools checks that run fails at once, naming the Debian
// packages to install, when wrk or PostgreSQL is missing, and needs
// PostgreSQL only to run it.
func TestHarness_CheckTools(t *testing.T) {
	bin := t.TempDir()
	t.Setenv("PATH", bin)
	t.Setenv("RAPPEL_PG_BIN", bin) // no initdb there
	work := filepath.Join(t.TempDir(), "work")
	var stderr strings.Builder
	err := run(context.Background(), []string{"run", "-work", work, "-out", ""}, io.Discard, &stderr)
	if err == nil || !strings.Contains(err.Error(), "apt-get install wrk postgresql") {
		t.Fatalf("run without wrk and PostgreSQL: %v; want it to name both packages", err)
	}
	if _, err := os.Stat(work); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("run made its work dir before finding wrk and PostgreSQL missing: %v", err)
	}
	err = run(context.Background(), []string{"check", "-systems", "rappel,bare,bleve"}, io.Discard, &stderr)
	if err == nil || !strings.Contains(err.Error(), "apt-get install wrk`") {
		t.Errorf("check without PostgreSQL among the systems: %v; want wrk alone named", err)
	}
	if err := os.WriteFile(filepath.Join(bin, "wrk"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), []string{"check", "-systems", "rappel,bare,bleve"}, io.Discard, &stderr); err != nil {
		t.Errorf("check with wrk on PATH and no PostgreSQL system: %v", err)
	}
	err = run(context.Background(), []string{"check"}, io.Discard, &stderr)
	if err == nil || !strings.Contains(err.Error(), "apt-get install postgresql`") {
		t.Errorf("check without PostgreSQL: %v; want postgresql alone named", err)
	}
}
