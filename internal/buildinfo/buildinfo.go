// Package buildinfo says which build of rappel is running: its version,
// commit, build date and Go version, for `rappel version`, GET /health and
// the rappel_build_info metric.
//
// The Makefile and the Dockerfile stamp the first three at link time:
//
//	go build -ldflags "-X github.com/rappel-ca/rappel/internal/buildinfo.version=v1.4.0
//	  -X github.com/rappel-ca/rappel/internal/buildinfo.commit=3f9c2e1…
//	  -X github.com/rappel-ca/rappel/internal/buildinfo.date=2026-11-22T06:00:00Z"
//
// Stamping does not depend on the toolchain's own version control stamp,
// which builds with -buildvcs=false (CI, the plugins) leave out. A binary
// built without the flags (go build, go install, go run) falls back to what
// the toolchain recorded, when it recorded anything, and to Dev and Unknown
// otherwise.
package buildinfo

import (
	"cmp"
	"runtime"
	"runtime/debug"
	"sync"
)

// Set at link time with -ldflags -X; empty when not stamped.
var (
	version string
	commit  string
	date    string
)

const (
	// Dev is the version of a binary nothing says the version of.
	Dev = "dev"
	// Unknown is the commit or build date of a binary that was not stamped
	// and whose toolchain recorded none.
	Unknown = "unknown"
)

// Info describes one build.
type Info struct {
	// Version is `git describe --tags --always --dirty` at build time (a
	// tag, or a tag plus commits since and an abbreviated commit), the
	// module version for go install, or Dev.
	Version string `json:"version"`
	// Commit is the full commit hash, or Unknown.
	Commit string `json:"commit"`
	// BuildDate is when the binary was built, RFC 3339 in UTC. Unstamped,
	// it is the commit's time when the toolchain recorded one (it records
	// no build time), or Unknown.
	BuildDate string `json:"build_date"`
	// GoVersion is the Go release the binary was built with.
	GoVersion string `json:"go_version"`
}

// Read returns the running binary's build.
var Read = sync.OnceValue(func() Info {
	bi, _ := debug.ReadBuildInfo()
	return resolve(Info{Version: version, Commit: commit, BuildDate: date, GoVersion: runtime.Version()}, bi)
})

// resolve fills what stamped lacks from bi (nil when the binary carries no
// build information), then from the defaults.
func resolve(stamped Info, bi *debug.BuildInfo) Info {
	var modVersion, revision, revTime string
	if bi != nil {
		// A local build records "(devel)", or with Go 1.24 and later a
		// pseudo-version made from the commit; go install module@v1.4.0
		// records v1.4.0.
		if v := bi.Main.Version; v != "(devel)" {
			modVersion = v
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.time":
				revTime = s.Value
			}
		}
	}
	return Info{
		Version:   cmp.Or(stamped.Version, modVersion, Dev),
		Commit:    cmp.Or(stamped.Commit, revision, Unknown),
		BuildDate: cmp.Or(stamped.BuildDate, revTime, Unknown),
		GoVersion: cmp.Or(stamped.GoVersion, runtime.Version()),
	}
}
