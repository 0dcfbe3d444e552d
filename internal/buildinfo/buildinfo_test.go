package buildinfo

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestResolve(t *testing.T) {
	vcs := &debug.BuildInfo{
		Main: debug.Module{Path: "github.com/rappel-ca/rappel", Version: "v0.0.0-20261120143000-3f9c2e1a7b4d+dirty"},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "3f9c2e1a7b4d0000000000000000000000000000"},
			{Key: "vcs.time", Value: "2026-11-20T14:30:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	devel := &debug.BuildInfo{Main: debug.Module{Path: "github.com/rappel-ca/rappel", Version: "(devel)"}}
	stamped := Info{Version: "v1.4.0-3-g9d8e7f6", Commit: "9d8e7f6000000000000000000000000000000000", BuildDate: "2026-11-22T06:00:00Z"}
	for _, tc := range []struct {
		name    string
		stamped Info
		bi      *debug.BuildInfo
		want    Info
	}{
		{"Stamped", stamped, vcs, Info{Version: stamped.Version, Commit: stamped.Commit, BuildDate: stamped.BuildDate, GoVersion: runtime.Version()}},
		{"StampedWithoutVCS", stamped, devel, Info{Version: stamped.Version, Commit: stamped.Commit, BuildDate: stamped.BuildDate, GoVersion: runtime.Version()}},
		{"VCSOnly", Info{}, vcs, Info{Version: vcs.Main.Version, Commit: "3f9c2e1a7b4d0000000000000000000000000000", BuildDate: "2026-11-20T14:30:00Z", GoVersion: runtime.Version()}},
		{"Nothing", Info{}, devel, Info{Version: Dev, Commit: Unknown, BuildDate: Unknown, GoVersion: runtime.Version()}},
		{"NoBuildInfo", Info{}, nil, Info{Version: Dev, Commit: Unknown, BuildDate: Unknown, GoVersion: runtime.Version()}},
		{"GoInstall", Info{}, &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, Info{Version: "v1.4.0", Commit: Unknown, BuildDate: Unknown, GoVersion: runtime.Version()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := resolve(tc.stamped, tc.bi); got != tc.want {
				t.Errorf("resolve = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestRead checks the test binary's own build: go test stamps nothing, so
// every field still says something.
func TestRead(t *testing.T) {
	b := Read()
	if b.Version == "" || b.Commit == "" || b.BuildDate == "" || b.GoVersion != runtime.Version() {
		t.Fatalf("Read() = %+v", b)
	}
}
