// Package guesttest helps test normalizers: it runs one over a directory,
// compares what it produced with a golden file, and reads the real public
// samples of the upstream formats kept beside the repository.
package guesttest

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest"
)

// Update, set by `go test -update`, rewrites golden files instead of
// comparing with them.
var Update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// Output is everything one run of a normalizer produced.
type Output struct {
	Records  []*rappel.Record `json:"records"`
	Problems []rappel.Problem `json:"problems"`
	Err      string           `json:"error,omitempty"`
}

// Run runs normalize over fsys and collects its output.
func Run(fsys fs.FS, normalize guest.Normalizer) Output {
	out := Output{Records: []*rappel.Record{}, Problems: []rappel.Problem{}}
	err := normalize(fsys, func(r *rappel.Record) error {
		out.Records = append(out.Records, r)
		return nil
	}, func(p rappel.Problem) {
		out.Problems = append(out.Problems, p)
	})
	if err != nil {
		out.Err = err.Error()
	}
	return out
}

// MustRun is Run for input that must be usable: an error fails the test.
func MustRun(tb testing.TB, fsys fs.FS, normalize guest.Normalizer) Output {
	tb.Helper()
	out := Run(fsys, normalize)
	if out.Err != "" {
		tb.Fatalf("normalize: %s", out.Err)
	}
	return out
}

// Golden compares v, encoded as indented JSON, with the file at path, or
// rewrites the file under -update.
func Golden(tb testing.TB, path string, v any) {
	tb.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		tb.Fatalf("encoding %s: %v", path, err)
	}
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		tb.Errorf("output differs from %s; run `go test -update` and review the diff:\n%s", path, firstDiff(buf.Bytes(), want))
	}
}

// firstDiff shows the first differing line, enough to start looking.
func firstDiff(got, want []byte) string {
	g, w := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl []byte
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if !bytes.Equal(gl, wl) {
			return "line " + strconv.Itoa(i+1) + ":\n  got:  " + string(gl) + "\n  want: " + string(wl)
		}
	}
	return ""
}

// ByID returns the run's records by record_id.
func (o Output) ByID() map[string]*rappel.Record {
	byID := make(map[string]*rappel.Record, len(o.Records))
	for _, r := range o.Records {
		byID[r.RecordID] = r
	}
	return byID
}

// RecordIDPattern is what every record_id a shipped normalizer emits must
// match: the source, a dash, and the lower-case native id.
var RecordIDPattern = regexp.MustCompile(`^(hc|tc)-[a-z0-9]+$`)

// Check fails the test for a record whose record_id breaks RecordIDPattern or
// a problem without a reason: what every fuzz target asserts.
func Check(tb testing.TB, out Output) {
	tb.Helper()
	for _, r := range out.Records {
		if r == nil {
			tb.Fatal("emitted a nil record")
		}
		if !RecordIDPattern.MatchString(r.RecordID) {
			tb.Fatalf("record_id %q does not match %s", r.RecordID, RecordIDPattern)
		}
	}
	for _, p := range out.Problems {
		if p.Reason == "" {
			tb.Fatalf("problem without a reason: %+v", p)
		}
	}
}

// RealSample returns the real upstream sample called name, read from the
// directory of real public samples kept beside the repository (../shared/real
// from the module root; README, "The real agency samples"). The samples are
// not part of the repository, so a test that needs one is skipped when it is
// absent, with a sentence saying where it was looked for, and fails instead
// when RAPPEL_CI is set, where they must be present.
func RealSample(tb testing.TB, name string) []byte {
	tb.Helper()
	root, err := moduleRoot()
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(root, "..", "shared", "real", name)
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		return b
	case errors.Is(err, fs.ErrNotExist) && os.Getenv("RAPPEL_CI") == "":
		tb.Skipf("the real sample %s is not at %s; put the real samples there to run this test (RAPPEL_CI makes its absence a failure)", name, path)
	default:
		tb.Fatalf("reading the real sample %s: %v", name, err)
	}
	return nil
}

// RealDir returns the path of the directory of real samples called name
// (RealSample's directory, ../shared/real/<name>), to list: skipped when it
// is absent, a failure under RAPPEL_CI, as RealSample.
func RealDir(tb testing.TB, name string) string {
	tb.Helper()
	root, err := moduleRoot()
	if err != nil {
		tb.Fatal(err)
	}
	dir := filepath.Join(root, "..", "shared", "real", name)
	switch st, err := os.Stat(dir); {
	case err == nil && st.IsDir():
		return dir
	case err == nil:
		tb.Fatalf("the real samples %s at %s are not a directory", name, dir)
	case errors.Is(err, fs.ErrNotExist) && os.Getenv("RAPPEL_CI") == "":
		tb.Skipf("the real samples %s are not at %s; put the real samples there to run this test (RAPPEL_CI makes their absence a failure)", name, dir)
	default:
		tb.Fatalf("reading the real samples %s: %v", name, err)
	}
	return ""
}

// moduleRoot returns the nearest directory above the working directory
// that holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
