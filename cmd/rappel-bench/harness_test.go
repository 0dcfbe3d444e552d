package main

import (
	"io"
	"slices"
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
