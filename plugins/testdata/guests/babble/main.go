// Command babble writes 20,000 log lines of its own on stderr, each 2,000
// bytes long, between two problem lines, and no records: a guest whose log
// would flood the server's.
package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

func main() {
	w := bufio.NewWriter(os.Stderr)
	fmt.Fprintln(w, `{"record_id":"babble-1","reason":"first problem"}`)
	filler := strings.Repeat("x", 2000)
	for i := range 20_000 {
		fmt.Fprintf(w, "babble line %d %s\n", i, filler)
	}
	fmt.Fprintln(w, `{"record_id":"babble-2","reason":"last problem"}`)
	w.Flush()
}
