// Command vrdbrenamed is the vrdb plugin fixed for an upstream that renamed
// the MANUFACTURER_RECALL_NO_TXT column to MANUFACTURER_RECALL_NUMBER: it
// reads the header's new name as the old one. The shipped plugin fails on
// such a file, which makes it the fix a swap test brings.
package main

import (
	"bytes"
	"io/fs"
	"testing/fstest"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest"
	"github.com/rappel-ca/rappel/plugins/vrdb"
)

func main() {
	guest.Main(func(fsys fs.FS, emit func(*rappel.Record) error, report func(rappel.Problem)) error {
		b, err := fs.ReadFile(fsys, "vrdb.csv")
		if err != nil {
			return err
		}
		header, rest, _ := bytes.Cut(b, []byte("\n"))
		header = bytes.Replace(header, []byte(`"MANUFACTURER_RECALL_NUMBER"`), []byte(`"MANUFACTURER_RECALL_NO_TXT"`), 1)
		fixed := append(append(header, '\n'), rest...)
		return vrdb.Normalize(fstest.MapFS{"vrdb.csv": {Data: fixed}}, emit, report)
	})
}
