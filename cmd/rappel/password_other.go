//go:build !linux

package main

import "os"

// noEcho leaves the echo on where the server is not built for: the
// password is then seen as it is typed, or better given in the
// environment.
func noEcho(*os.File) (restore func()) { return func() {} }
