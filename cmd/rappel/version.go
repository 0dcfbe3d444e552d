package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/rappel-ca/rappel/edge"
	"github.com/rappel-ca/rappel/internal/buildinfo"
)

// runVersion prints which build this binary is to w: the version on the
// first line, as `rappel --version | head -1` expects, then the commit,
// the build date, the Go version and the version of the API it serves,
// one a line.
func runVersion(args []string, w io.Writer) error {
	if err := parseFlags(flag.NewFlagSet("rappel version", flag.ContinueOnError), args); err != nil {
		return err
	}
	b := buildinfo.Read()
	_, err := fmt.Fprintf(w, "rappel %s\ncommit %s\nbuilt  %s\ngo     %s\napi    %s\n", b.Version, b.Commit, b.BuildDate, b.GoVersion, edge.APIVersion)
	return err
}
