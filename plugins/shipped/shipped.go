// Package shipped names the sources whose plugins the binary ships: for
// each, the Go code its Wasm module is compiled from (plugins/<source>/wasm)
// and the directory of a corpus (bundle/synth's layout) its input is in.
// The bundle step runs that code natively on the corpus, and so does the
// benchmark harness for its larger data sets; both read it from here.
package shipped

import (
	"github.com/rappel-ca/rappel/plugins/detail"
	"github.com/rappel-ca/rappel/plugins/guest"
	"github.com/rappel-ca/rappel/plugins/hcdump"
	"github.com/rappel-ca/rappel/plugins/vrdb"
)

// Source is a shipped source's normalizer and its corpus directory, which
// its plugin sees as /in.
type Source struct {
	Normalize guest.Normalizer
	CorpusDir string
}

// Sources are the shipped sources, by name.
var Sources = map[string]Source{
	"hcdump": {Normalize: hcdump.Normalize, CorpusDir: "hc"},
	"vrdb":   {Normalize: vrdb.Normalize, CorpusDir: "tc"},
	"detail": {Normalize: detail.Normalize, CorpusDir: "detail"},
}
