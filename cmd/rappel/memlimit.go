package main

import (
	"bufio"
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
)

// serverShare is the part of its cgroup's memory.max a node gives its own
// Go heap as a soft limit (GOMEMLIMIT) when none is set: the rest is for
// its plugin processes, which share the cgroup (two at a time, about 180
// MiB each on Transport Canada's full-size file), and the page cache. At
// MemoryMax=1G that is 640 MiB.
const serverShare = 0.625

// setMemoryLimit sets the Go runtime's soft memory limit from the cgroup
// the process runs in, when GOMEMLIMIT does not set one: the collector
// then works harder as the heap nears it, instead of letting a refresh's
// garbage double the heap past the unit's MemoryMax. It logs the limit it
// set; it sets none outside a cgroup with a memory.max.
func setMemoryLimit(log *slog.Logger) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	max, path := cgroupMemoryMax("/proc/self/cgroup", "/sys/fs/cgroup")
	if max <= 0 {
		return
	}
	limit := int64(float64(max) * serverShare)
	debug.SetMemoryLimit(limit)
	log.Info("memory limit set from the cgroup's", "gomemlimit_mib", limit>>20, "memory_max_mib", max>>20, "cgroup", path,
		"why", "GOMEMLIMIT is not set; the rest of memory.max is for the plugin processes")
}

// cgroupMemoryMax returns the memory.max of the cgroup v2 that the
// process's cgroup file (/proc/self/cgroup) names, under root, and its
// path; 0 when there is none or it is "max".
func cgroupMemoryMax(cgroupFile, root string) (int64, string) {
	b, err := os.ReadFile(cgroupFile)
	if err != nil {
		return 0, ""
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "0::")
		if !ok {
			continue
		}
		path := filepath.Join(root, filepath.Clean("/"+rest), "memory.max")
		v, err := os.ReadFile(path)
		if err != nil {
			return 0, ""
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(v)), 10, 64)
		if err != nil {
			return 0, "" // "max": no limit
		}
		return n, filepath.Dir(path)
	}
	return 0, ""
}
