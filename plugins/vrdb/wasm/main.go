// Command wasm is the vrdb normalizer as a WASI plugin: build it with
// GOOS=wasip1 GOARCH=wasm go build ./plugins/vrdb/wasm.
package main

import (
	"github.com/rappel-ca/rappel/plugins/guest"
	"github.com/rappel-ca/rappel/plugins/vrdb"
)

func main() { guest.Main(vrdb.Normalize) }
