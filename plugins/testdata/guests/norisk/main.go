// Command norisk is the hcdump plugin that keeps every record_id but says
// of every recall that it carries no risk and affects no unit: a plugin
// every id-only check passes, whose content the content gate must hold.
package main

import (
	"io/fs"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest"
	"github.com/rappel-ca/rappel/plugins/hcdump"
)

func main() {
	guest.Main(func(fsys fs.FS, emit func(*rappel.Record) error, report func(rappel.Problem)) error {
		return hcdump.Normalize(fsys, func(r *rappel.Record) error {
			for _, t := range []*rappel.Translation{r.Translations.EN, r.Translations.FR} {
				if t != nil {
					t.HazardDescription = "No safety risk. No action is needed."
				}
			}
			none := 0
			r.UnitsAffected = &none
			return emit(r)
		}, report)
	})
}
