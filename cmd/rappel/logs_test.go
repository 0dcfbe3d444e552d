package main

import (
	"log/slog"
	"strings"
	"testing"
)

func TestLogLevelFlag(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		for in, want := range map[string]slog.Level{"debug": slog.LevelDebug, "INFO": slog.LevelInfo, " warn ": slog.LevelWarn, "warning": slog.LevelWarn, "error": slog.LevelError} {
			c := NewServeCommand()
			if err := c.ParseFlags([]string{"--log-level", in}); err != nil || c.LogLevel != want {
				t.Errorf("--log-level %q: %v, %v; want %v", in, c.LogLevel, err, want)
			}
		}
		if c := NewServeCommand(); c.ParseFlags(nil) != nil || c.LogLevel != slog.LevelInfo {
			t.Errorf("default level %v, want info", c.LogLevel)
		}
	})
	t.Run("Environment", func(t *testing.T) {
		t.Setenv("RAPPEL_LOG_LEVEL", "debug")
		c := NewBundleCommand()
		if err := c.ParseFlags(nil); err != nil || c.LogLevel != slog.LevelDebug {
			t.Fatalf("RAPPEL_LOG_LEVEL=debug: %v, %v", c.LogLevel, err)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, in := range []string{"verbose", "info+2", "", "-4"} {
			err := NewServeCommand().ParseFlags([]string{"--log-level=" + in})
			if err == nil || !strings.Contains(err.Error(), "give debug, info, warn or error") {
				t.Errorf("--log-level %q: %v, want a sentence naming the levels", in, err)
			}
		}
	})
}
