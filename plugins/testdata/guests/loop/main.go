// Command loop is a runaway guest: it never returns.
package main

func main() {
	n := 0
	for {
		n++
	}
}
