// Command hcmoved is the hcdump plugin for an upstream that moved its files
// under v2/: the shipped plugin fails on such an input, this one reads it,
// which makes it the fix a swap test brings.
package main

import (
	"io/fs"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest"
	"github.com/rappel-ca/rappel/plugins/hcdump"
)

func main() {
	guest.Main(func(fsys fs.FS, emit func(*rappel.Record) error, report func(rappel.Problem)) error {
		moved, err := fs.Sub(fsys, "v2")
		if err != nil {
			return err
		}
		return hcdump.Normalize(moved, emit, report)
	})
}
