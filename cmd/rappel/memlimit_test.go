package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCgroupMemoryMax(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("proc/cgroup", "0::/system.slice/rappel.service\n")
	write("cg/system.slice/rappel.service/memory.max", "1073741824\n")
	if n, path := cgroupMemoryMax(filepath.Join(dir, "proc/cgroup"), filepath.Join(dir, "cg")); n != 1<<30 || filepath.Base(path) != "rappel.service" {
		t.Errorf("memory.max = %d at %q, want 1 GiB at the unit's cgroup", n, path)
	}
	if got := int64(float64(1<<30)*serverShare) >> 20; got != 640 {
		t.Errorf("at MemoryMax=1G the node's GOMEMLIMIT is %d MiB, want 640 (docs/operations.md)", got)
	}
	write("cg/system.slice/rappel.service/memory.max", "max\n")
	if n, _ := cgroupMemoryMax(filepath.Join(dir, "proc/cgroup"), filepath.Join(dir, "cg")); n != 0 {
		t.Errorf("memory.max \"max\" = %d, want 0 (no limit)", n)
	}
	write("proc/cgroup", "12:memory:/x\n")
	if n, _ := cgroupMemoryMax(filepath.Join(dir, "proc/cgroup"), filepath.Join(dir, "cg")); n != 0 {
		t.Errorf("a cgroup v1 process = %d, want 0", n)
	}
}
