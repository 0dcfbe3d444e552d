// Command panic crashes the way a Go program does, without the guest
// package's protection: a stack trace on stderr and exit code 2.
package main

import "fmt"

func main() {
	fmt.Println(`{"record_id":"hc-1","recall_id":"1"}`)
	var m map[string]int
	m["boom"]++ // assignment to entry in nil map
}
