// Command chatty is the hcdump plugin that also writes log lines of its
// own on stderr, lines that are not problems: what "rappel plugin test
// --log" shows.
package main

import (
	"fmt"
	"io/fs"
	"os"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest"
	"github.com/rappel-ca/rappel/plugins/hcdump"
)

func main() {
	guest.Main(func(fsys fs.FS, emit func(*rappel.Record) error, report func(rappel.Problem)) error {
		fmt.Fprintln(os.Stderr, "chatty: starting")
		n := 0
		err := hcdump.Normalize(fsys, func(r *rappel.Record) error { n++; return emit(r) }, report)
		fmt.Fprintf(os.Stderr, "chatty: %d records\n", n)
		return err
	})
}
