// Package guest is the guest side of the plugin ABI (see plugins/ABI.md) for
// normalizers written in Go and compiled to WASI: Main runs a normalizer over
// the files the host mounts at /in and speaks the host's line protocol.
//
// It also holds what every normalizer shares, so that the three sources clean
// text and read dates the same way: CleanText, ParseDate and SkipBOM.
package guest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rappel-ca/rappel"
)

// Normalizer is the signature every source's Normalize has: it reads the
// source's raw files from fsys, calls emit for every record and report for
// every record-level problem, and returns an error only when the input as a
// whole is unusable. An error from emit must stop it and be returned.
type Normalizer func(fsys fs.FS, emit func(*rappel.Record) error, report func(rappel.Problem)) error

// Main runs normalize over the read-only directory "/in", writes each record
// as one line of JSON (rappel.Record) to stdout and each problem as one line
// of JSON (rappel.Problem) to stderr, buffered, and exits 0; if normalize
// returns an error (or panics) it writes {"fatal": "<sentence>"} as the last
// stderr line and exits 1.
//
// The host passes the ABI version as the second argument; Main refuses a
// version other than ABIVersion, since it would misread the host or be
// misread. Run by hand without arguments, it assumes ABIVersion.
func Main(normalize func(fs.FS, func(*rappel.Record) error, func(rappel.Problem)) error) {
	os.Exit(Run(os.Args, os.DirFS("/in"), os.Stdout, os.Stderr, normalize))
}

// ABIVersion is the version of plugins/ABI.md this package implements.
const ABIVersion = "rappel-plugin/1"

// Run is Main without the process: it takes the arguments and returns the
// exit code, so the protocol can be tested natively, and so that a host can
// run a shipped normalizer compiled into itself through the same protocol
// as its module (plugins.Host.LoadNative).
func Run(args []string, fsys fs.FS, stdout, stderr io.Writer, normalize Normalizer) int {
	if len(args) > 1 && args[1] != ABIVersion {
		normalize = func(fs.FS, func(*rappel.Record) error, func(rappel.Problem)) error {
			return fmt.Errorf("the host speaks plugin ABI %q but this plugin speaks %q", args[1], ABIVersion)
		}
	}
	out := bufio.NewWriterSize(stdout, 256<<10)
	errw := bufio.NewWriterSize(stderr, 64<<10)
	recs := newLineEncoder(out)
	probs := newLineEncoder(errw)

	emit := func(r *rappel.Record) error {
		if err := recs.Encode(r); err != nil {
			return fmt.Errorf("writing record %s: %w", r.RecordID, err)
		}
		return nil
	}
	// A problem that cannot be written is lost, but the run goes on: the
	// records matter more than their diagnostics, and a broken stderr shows
	// up again below when the fatal line or the final flush fails.
	report := func(p rappel.Problem) { _ = probs.Encode(p) }

	err := protect(func() error { return normalize(fsys, emit, report) })
	code := 0
	if ferr := out.Flush(); ferr != nil && err == nil {
		err = fmt.Errorf("writing records: %w", ferr)
	}
	if err != nil {
		_ = probs.Encode(struct {
			Fatal string `json:"fatal"`
		}{Sentence(err.Error())})
		code = 1
	}
	if ferr := errw.Flush(); ferr != nil {
		code = 1
	}
	return code
}

// protect turns a panic in fn into an error: a guest that crashes should
// still tell the host why in one fatal line rather than a Go stack trace.
func protect(fn func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("the normalizer panicked: %v", v)
		}
	}()
	return fn()
}

// newLineEncoder encodes one JSON value per line without HTML escaping: the
// output is data, never embedded in a page, and "&" reads better than "\u0026".
func newLineEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}

// Sentence makes an error phrase, written lower case without a final stop
// as Go errors are, into a sentence for a person: a capital and a full stop.
func Sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	s = string(unicode.ToUpper(r)) + s[n:]
	if !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "?") && !strings.HasSuffix(s, "!") {
		s += "."
	}
	return s
}
