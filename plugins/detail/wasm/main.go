// Command wasm is the detail normalizer as a WASI plugin: build it with
// GOOS=wasip1 GOARCH=wasm go build ./plugins/detail/wasm.
package main

import (
	"github.com/rappel-ca/rappel/plugins/detail"
	"github.com/rappel-ca/rappel/plugins/guest"
)

func main() { guest.Main(detail.Normalize) }
