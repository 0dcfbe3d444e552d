package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// loggedError is an error a command has written to its JSON log already.
type loggedError struct{ error }

func (e loggedError) Unwrap() error { return e.error }

// printFinal prints the error that ends the process to stderr, unless the
// command logged it (loggedError): a JSON log stays JSON to its last line.
func printFinal(stderr io.Writer, err error) {
	if !errors.As(err, new(loggedError)) {
		fmt.Fprintln(stderr, "rappel:", err)
	}
}

// levelFlag is the flag.Value of --log-level. It takes the four names
// alone, unlike slog.Level's UnmarshalText, which also takes offsets such
// as info+2 that no one means to type.
type levelFlag struct{ l *slog.Level }

func (f levelFlag) String() string {
	if f.l == nil {
		return "info"
	}
	return strings.ToLower(f.l.String())
}

func (f levelFlag) Set(s string) error {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		*f.l = slog.LevelDebug
	case "info":
		*f.l = slog.LevelInfo
	case "warn", "warning":
		*f.l = slog.LevelWarn
	case "error":
		*f.l = slog.LevelError
	default:
		return fmt.Errorf("%q is not a log level; give debug, info, warn or error", s)
	}
	return nil
}
