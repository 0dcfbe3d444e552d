// Command wasm is the openFDA example plugin as a WASI module: build it with
// GOOS=wasip1 GOARCH=wasm go build ./plugins/examples/openfda/wasm.
package main

import (
	"github.com/rappel-ca/rappel/plugins/examples/openfda"
	"github.com/rappel-ca/rappel/plugins/guest"
)

func main() { guest.Main(openfda.Normalize) }
