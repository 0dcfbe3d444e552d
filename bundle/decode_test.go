package bundle

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/klauspost/compress/zstd"

	"github.com/rappel-ca/rappel"
)

// TestReadRecords_BadLine checks that a line that is not a record is named
// by its number, with encoding/json's error (the decoding is sonic's, but a
// refused line gets encoding/json's error; see internal/jsonx).
func TestReadRecords_BadLine(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		as         any
	}{
		{"Syntax", `{"record_id":"hc-2",`, new(*json.SyntaxError)},
		{"Type", `{"record_id":"hc-2","units_affected":"many"}`, new(*json.UnmarshalTypeError)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enc, err := zstd.NewWriter(nil)
			if err != nil {
				t.Fatal(err)
			}
			data := enc.EncodeAll([]byte(`{"record_id":"hc-1"}`+"\n"+tc.line+"\n"), nil)
			fsys := fstest.MapFS{recordsFile: {Data: data}}
			var got []string
			err = ReadRecords(fsys, func(r *rappel.Record) error { got = append(got, r.RecordID); return nil })
			if err == nil || !strings.Contains(err.Error(), "decoding bundle records, line 2: ") || !errors.As(err, tc.as) {
				t.Fatalf("error %v, want line 2 named with encoding/json's %T", err, tc.as)
			}
			if len(got) != 1 || got[0] != "hc-1" {
				t.Fatalf("records read before the bad line: %q", got)
			}
		})
	}
}
