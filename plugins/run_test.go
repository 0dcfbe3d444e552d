package plugins

import (
	"io"
	"log/slog"
	"testing"
)

// FuzzParseOutput feeds arbitrary guest output through the host's parsing
// of stdout and stderr: it must never panic, and every record line is
// either a record or a refusal.
func FuzzParseOutput(f *testing.F) {
	f.Add([]byte(`{"record_id":"hc-1","recall_id":"1"}`+"\n"+`not json`+"\n"), []byte(`{"record_id":"hc-2","reason":"bad row"}`+"\n"+`{"fatal":"gave up"}`))
	f.Add([]byte(`{"record_id":"hc-1"} {"record_id":"hc-2"}`), []byte("panic: boom\n\ngoroutine 1 [running]:\n"))
	f.Add([]byte(`{"record_id":"HC-1","units_affected":-1,"translations":{"en":null}}`), []byte{0xff, '\n'})
	p := &Plugin{Name: "fuzz", host: &Host{MaxRecords: 50, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}}
	f.Fuzz(func(t *testing.T, stdout, stderr []byte) {
		res := &Result{}
		p.parseStderr(stderr, res)
		problems := len(res.Problems)
		p.parseStdout(stdout, res)
		if got := len(res.Records) + len(res.Refusals); got != res.Lines {
			t.Fatalf("%d records and %d refusals for %d lines", len(res.Records), len(res.Refusals), res.Lines)
		}
		if len(res.Problems) != problems+len(res.Refusals) {
			t.Fatalf("refusals are not all problems")
		}
		for _, r := range res.Records {
			if !recordIDPattern.MatchString(r.RecordID) {
				t.Fatalf("accepted record_id %q", r.RecordID)
			}
		}
		Judge("fuzz", res, true)
	})
}
