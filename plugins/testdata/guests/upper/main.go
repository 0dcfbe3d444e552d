// Command upper is the hcdump plugin with every title in upper case: a
// changed plugin whose effect a hot-swap test can see.
package main

import (
	"io/fs"
	"strings"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest"
	"github.com/rappel-ca/rappel/plugins/hcdump"
)

func main() {
	guest.Main(func(fsys fs.FS, emit func(*rappel.Record) error, report func(rappel.Problem)) error {
		return hcdump.Normalize(fsys, func(r *rappel.Record) error {
			for _, t := range []*rappel.Translation{r.Translations.EN, r.Translations.FR} {
				if t != nil {
					t.Title = strings.ToUpper(t.Title)
				}
			}
			return emit(r)
		}, report)
	})
}
