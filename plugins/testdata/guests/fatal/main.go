// Command fatal gives up on its input as a whole.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Println(`{"record_id":"hc-1"}`)
	fmt.Fprintln(os.Stderr, `{"fatal":"recalls-en.json is not a JSON array"}`)
	os.Exit(1)
}
