// Command flood writes to stdout without end.
package main

import (
	"os"
	"strings"
)

func main() {
	line := []byte(`{"record_id":"x-` + strings.Repeat("a", 40) + `"}` + "\n")
	for {
		if _, err := os.Stdout.Write(line); err != nil {
			os.Exit(3)
		}
	}
}
