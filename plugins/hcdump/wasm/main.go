// Command wasm is the hcdump normalizer as a WASI plugin: build it with
// GOOS=wasip1 GOARCH=wasm go build ./plugins/hcdump/wasm.
package main

import (
	"github.com/rappel-ca/rappel/plugins/guest"
	"github.com/rappel-ca/rappel/plugins/hcdump"
)

func main() { guest.Main(hcdump.Normalize) }
