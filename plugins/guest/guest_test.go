package guest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rappel-ca/rappel"
)

// twoRecords emits two records and reports one problem.
func twoRecords(fsys fs.FS, emit func(*rappel.Record) error, report func(rappel.Problem)) error {
	if _, err := fs.Stat(fsys, "in.txt"); err != nil {
		return err
	}
	for _, id := range []string{"hc-1", "hc-2"} {
		if err := emit(&rappel.Record{RecordID: id, Translations: rappel.Translations{EN: &rappel.Translation{Title: "A & B <c>"}}}); err != nil {
			return err
		}
	}
	report(rappel.Problem{Source: "test", RecordID: "hc-3", Reason: "Row 3 was skipped."})
	return nil
}

func lines(b []byte) []string {
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func TestRun(t *testing.T) {
	in := fstest.MapFS{"in.txt": {Data: []byte("x")}}
	t.Run("OK", func(t *testing.T) {
		var out, errw bytes.Buffer
		if code := Run([]string{"hcdump", ABIVersion}, in, &out, &errw, twoRecords); code != 0 {
			t.Fatalf("exit code %d; stderr %s", code, errw.String())
		}
		got := lines(out.Bytes())
		if len(got) != 2 || !strings.Contains(got[0], `"record_id":"hc-1"`) || !strings.Contains(got[0], `"A & B <c>"`) {
			t.Errorf("stdout = %q", got)
		}
		var p rappel.Problem
		if err := json.Unmarshal(errw.Bytes(), &p); err != nil || p.RecordID != "hc-3" {
			t.Errorf("stderr = %q (%v)", errw.String(), err)
		}
	})
	t.Run("NoArgs", func(t *testing.T) {
		var out, errw bytes.Buffer
		if code := Run(nil, in, &out, &errw, twoRecords); code != 0 {
			t.Fatalf("exit code %d", code)
		}
	})
	t.Run("Fatal", func(t *testing.T) {
		var out, errw bytes.Buffer
		if code := Run(nil, fstest.MapFS{}, &out, &errw, twoRecords); code != 1 {
			t.Fatalf("exit code %d, want 1", code)
		}
		wantFatal(t, errw.Bytes(), "Open in.txt: file does not exist.")
	})
	t.Run("Panic", func(t *testing.T) {
		var out, errw bytes.Buffer
		code := Run(nil, in, &out, &errw, func(fs.FS, func(*rappel.Record) error, func(rappel.Problem)) error {
			var m map[string]int
			m["boom"]++
			return nil
		})
		if code != 1 {
			t.Fatalf("exit code %d, want 1", code)
		}
		wantFatal(t, errw.Bytes(), "The normalizer panicked: assignment to entry in nil map.")
	})
	t.Run("WrongABI", func(t *testing.T) {
		var out, errw bytes.Buffer
		if code := Run([]string{"hcdump", "rappel-plugin/9"}, in, &out, &errw, twoRecords); code != 1 {
			t.Fatalf("exit code %d, want 1", code)
		}
		if out.Len() != 0 {
			t.Errorf("stdout = %q, want nothing", out.String())
		}
		wantFatal(t, errw.Bytes(), `The host speaks plugin ABI "rappel-plugin/9" but this plugin speaks "rappel-plugin/1".`)
	})
	t.Run("BrokenStdout", func(t *testing.T) {
		var errw bytes.Buffer
		if code := Run(nil, in, failWriter{}, &errw, twoRecords); code != 1 {
			t.Fatalf("exit code %d, want 1", code)
		}
		wantFatal(t, errw.Bytes(), "Writing records: disk on fire.")
	})
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk on fire") }

// wantFatal checks that the last line of stderr is the fatal line want.
func wantFatal(t *testing.T, stderr []byte, want string) {
	t.Helper()
	ls := lines(stderr)
	var f struct {
		Fatal string `json:"fatal"`
	}
	if err := json.Unmarshal([]byte(ls[len(ls)-1]), &f); err != nil || f.Fatal != want {
		t.Errorf("last stderr line = %q, want fatal %q", ls[len(ls)-1], want)
	}
}

func TestSentence(t *testing.T) {
	for in, want := range map[string]string{
		"":                     "",
		"reading x: not found": "Reading x: not found.",
		"Already a sentence.":  "Already a sentence.",
		"élan vital":           "Élan vital.",
		"  why?  ":             "Why?",
	} {
		if got := Sentence(in); got != want {
			t.Errorf("Sentence(%q) = %q, want %q", in, got, want)
		}
	}
}
