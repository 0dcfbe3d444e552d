// Command wasm is the recall-page normalizer as a WASI plugin: build it
// with GOOS=wasip1 GOARCH=wasm go build ./plugins/page/wasm.
package main

import (
	"github.com/rappel-ca/rappel/plugins/guest"
	"github.com/rappel-ca/rappel/plugins/page"
)

func main() { guest.Main(page.Normalize) }
