// Command lossy is the hcdump plugin that drops every other record: a
// candidate that must not replace the real one.
package main

import (
	"io/fs"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest"
	"github.com/rappel-ca/rappel/plugins/hcdump"
)

func main() {
	guest.Main(func(fsys fs.FS, emit func(*rappel.Record) error, report func(rappel.Problem)) error {
		n := 0
		return hcdump.Normalize(fsys, func(r *rappel.Record) error {
			if n++; n%2 == 0 {
				return nil
			}
			return emit(r)
		}, report)
	})
}
