// Command probe tries to reach outside its sandbox and reports, as problem
// lines on stderr, each attempt that succeeded.
package main

import (
	"fmt"
	"net"
	"os"
	"time"
)

func escaped(what string) { fmt.Fprintf(os.Stderr, `{"reason":"escaped: %s"}`+"\n", what) }

func main() {
	if _, err := os.ReadFile("/etc/passwd"); err == nil {
		escaped("read /etc/passwd")
	}
	if _, err := os.ReadFile("/in/../../etc/passwd"); err == nil {
		escaped("read /etc/passwd through /in/..")
	}
	if err := os.WriteFile("/in/written", []byte("x"), 0o644); err == nil {
		escaped("wrote under /in")
	}
	if len(os.Environ()) > 0 {
		escaped(fmt.Sprintf("saw environment %q", os.Environ()))
	}
	if c, err := net.DialTimeout("tcp", "127.0.0.1:80", time.Second); err == nil {
		c.Close()
		escaped("dialed 127.0.0.1:80")
	}
	b, err := os.ReadFile("/in/input.txt")
	if err != nil || string(b) != "hello" {
		escaped("could not read its own input") // the one thing it must do
	}
	fmt.Printf("{\"record_id\":\"probe-%d\"}\n", len(os.Args))
}
