package plugins

import (
	"io"
	"log/slog"
	"reflect"
	"testing"
)

// FuzzParseOutput feeds arbitrary guest output through the host's reading
// of stdout and stderr, written whole and in pieces of every size the
// input picks: it must never panic, every record line is either a record
// or a refusal, and what is read does not depend on how the output was cut
// into writes.
func FuzzParseOutput(f *testing.F) {
	f.Add([]byte(`{"record_id":"hc-1","recall_id":"1"}`+"\n"+`not json`+"\n"), []byte(`{"record_id":"hc-2","reason":"bad row"}`+"\n"+`{"fatal":"gave up"}`), uint8(3))
	f.Add([]byte(`{"record_id":"hc-1"} {"record_id":"hc-2"}`), []byte("panic: boom\n\ngoroutine 1 [running]:\n"), uint8(1))
	f.Add([]byte(`{"record_id":"HC-1","units_affected":-1,"translations":{"en":null}}`), []byte{0xff, '\n'}, uint8(200))
	p := &Plugin{Name: "fuzz", host: &Host{MaxRecords: 50, MaxLogLines: 5, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}}
	f.Fuzz(func(t *testing.T, stdout, stderr []byte, piece uint8) {
		whole, wholeLog := readOutput(p, stdout, stderr, len(stdout)+len(stderr)+1)
		cut, cutLog := readOutput(p, stdout, stderr, int(piece)+1)
		if !reflect.DeepEqual(whole, cut) || !reflect.DeepEqual(wholeLog.problems, cutLog.problems) || wholeLog.logLine != cutLog.logLine {
			t.Fatalf("read whole: %+v %+v; in pieces of %d: %+v %+v", whole, wholeLog, piece+1, cut, cutLog)
		}
		if got := len(whole.records) + len(whole.refusals); got != whole.lines {
			t.Fatalf("%d records and %d refusals for %d lines", len(whole.records), len(whole.refusals), whole.lines)
		}
		for _, r := range whole.records {
			if !recordIDPattern.MatchString(r.RecordID) {
				t.Fatalf("accepted record_id %q", r.RecordID)
			}
		}
		Judge("fuzz", &Result{Records: whole.records, Problems: append(wholeLog.problems, whole.problems...), Refusals: whole.refusals, Lines: whole.lines}, true)
	})
}

// readOutput reads stdout and stderr as a run does, written in pieces of
// piece bytes.
func readOutput(p *Plugin, stdout, stderr []byte, piece int) (*recordReader, *logReader) {
	records := &recordReader{plugin: p}
	log := &logReader{plugin: p, log: &guestLog{plugin: p}}
	out := &capped{maxLine: maxRecordLineBytes, line: records.line}
	errw := &capped{maxLine: maxLogReadBytes, line: log.line}
	for _, w := range []struct {
		c *capped
		b []byte
	}{{out, stdout}, {errw, stderr}} {
		for b := w.b; len(b) > 0; {
			n := min(piece, len(b))
			w.c.Write(b[:n])
			b = b[n:]
		}
		w.c.flush()
	}
	return records, log
}
