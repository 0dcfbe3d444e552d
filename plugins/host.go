package plugins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/rappel-ca/rappel/plugins/guest"
)

// ABIVersion is the version of the plugin contract (ABI.md) this host
// speaks. It is passed to every guest as its second argument.
const ABIVersion = "rappel-plugin/1"

// Host compiles and runs plugins. Configure the exported fields, then Open.
type Host struct {
	// CacheDir keeps compiled modules across restarts; "" caches in memory.
	CacheDir string
	// MemoryLimitPages caps a guest's linear memory, in 64 KiB pages.
	MemoryLimitPages uint32
	// Timeout bounds one run; the guest is stopped when it expires.
	Timeout time.Duration
	// MaxOutput caps the bytes a run may write to stdout, and to stderr.
	MaxOutput int64
	// MaxRecords caps the records a run may return.
	MaxRecords int
	// MaxLogLines caps the guest's own log lines (stderr that is not a
	// problem) logged one by one per run; the rest are counted in one
	// line. 0 logs every line.
	MaxLogLines int
	// Interruptible makes a runaway guest stoppable: a run ends at Timeout
	// or when ctx is done, whatever the guest does. Turn it off only for
	// trusted plugins, such as the shipped ones at build time: without it a
	// guest that never returns is never stopped.
	Interruptible bool
	// InProcess stops an interruptible guest inside this process, with the
	// deadline checks wazero compiles into guest code (WithCloseOnContextDone).
	// By default an interruptible guest runs in a child process instead,
	// compiled without the checks and killed at its deadline: the checks
	// slow Go guests about fivefold, a child costs a fixed ~0.1 s (see
	// RATIONALE.md).
	InProcess bool
	// Command starts the child process of a run that is interruptible and
	// not InProcess: a program whose main calls RunChild. nil runs this
	// executable again with ChildCommand as its only argument, as rappel
	// does ("rappel plugin-child"); a test binary serves it from TestMain
	// (plugintest.ServeChild), and another program may point Command at
	// rappel or at any command that ends in RunChild.
	Command []string
	// MaxChildMemory caps a child's resident memory, in bytes; the child is
	// killed past it. 0 allows twice the guest memory limit and twice the
	// input, plus 512 MiB for the runtime and compiled code (a growing
	// linear memory is copied, so it briefly exists twice).
	MaxChildMemory int64
	// Settings names the settings an operator raises a limit with, for the
	// sentences of runs stopped at one (rappel serve's flags by default).
	Settings LimitSettings
	Logger   *slog.Logger

	runtime  wazero.Runtime
	cache    wazero.CompilationCache
	tempDir  string // a cache dir Open created for children, removed by Close
	childCmd []string
}

// LimitSettings names, for each limit of a run, the setting that changes
// it: a run stopped at a limit says which one, and how to raise it.
type LimitSettings struct {
	Timeout, Memory, Output string
}

// ServeLimitSettings are rappel serve's flags for the limits.
var ServeLimitSettings = LimitSettings{Timeout: "--plugin-timeout", Memory: "--plugin-memory", Output: "--plugin-output"}

// NewHost returns a Host with defaults sized for the national feeds: 1 GiB
// of guest memory, two minutes, 512 MiB of output, two million records, 20
// log lines logged a run, and
// runs that are interruptible, each in a child process.
func NewHost() *Host {
	return &Host{
		MemoryLimitPages: 16384,
		Timeout:          2 * time.Minute,
		MaxOutput:        512 << 20,
		MaxRecords:       2_000_000,
		MaxLogLines:      20,
		Interruptible:    true,
		Settings:         ServeLimitSettings,
		Logger:           slog.Default(),
	}
}

// Open creates the runtime and its compilation cache. Settings that shape
// compiled code or choose where guests run (MemoryLimitPages,
// Interruptible, InProcess, Command) are read here. Children share the
// cache on disk, so a module compiled once here is not compiled again by
// each child; without a CacheDir, Open makes a temporary one for them.
func (h *Host) Open(ctx context.Context) error {
	var err error
	if h.child() {
		if err := h.openChild(); err != nil {
			return err
		}
	}
	if h.CacheDir != "" {
		if err := os.MkdirAll(h.CacheDir, 0o755); err != nil {
			return fmt.Errorf("creating plugin cache dir: %w", err)
		}
		h.cache, err = wazero.NewCompilationCacheWithDir(h.CacheDir)
		if err != nil {
			return fmt.Errorf("opening plugin cache %q: %w", h.CacheDir, err)
		}
	} else {
		h.cache = wazero.NewCompilationCache()
	}
	cfg := wazero.NewRuntimeConfig().
		WithCompilationCache(h.cache).
		WithMemoryLimitPages(h.MemoryLimitPages).
		WithCloseOnContextDone(h.Interruptible && h.InProcess)
	h.runtime = wazero.NewRuntimeWithConfig(ctx, cfg)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, h.runtime); err != nil {
		return fmt.Errorf("instantiating wasi: %w", err)
	}
	return nil
}

// Close releases the runtime and every compiled plugin. It is safe after a
// failed or partial Open.
func (h *Host) Close(ctx context.Context) error {
	var err error
	if h.runtime != nil {
		err = h.runtime.Close(ctx)
	}
	if h.cache != nil {
		if cerr := h.cache.Close(ctx); err == nil {
			err = cerr
		}
	}
	if h.tempDir != "" {
		if rerr := os.RemoveAll(h.tempDir); err == nil {
			err = rerr
		}
		h.CacheDir, h.tempDir = "", ""
	}
	return err
}

// child reports whether runs happen in child processes.
func (h *Host) child() bool { return h.Interruptible && !h.InProcess }

// openChild settles the child command and makes sure children find the
// compiled modules on disk.
func (h *Host) openChild() error {
	h.childCmd = h.Command
	if len(h.childCmd) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("finding this executable to run plugins in: %w", err)
		}
		h.childCmd = []string{exe, ChildCommand}
	}
	if v, ok := os.LookupEnv(childEnv); ok {
		// This process is itself a child whose main did not call
		// RunChild: starting children of its own would repeat that at
		// every level.
		return fmt.Errorf("this process was started as a plugin child (%s=%s) but did not serve the run: its main must call plugins.RunChild when its first argument is %q", childEnv, v, ChildCommand)
	}
	if h.CacheDir == "" {
		dir, err := os.MkdirTemp("", "rappel-plugins-")
		if err != nil {
			return fmt.Errorf("creating plugin cache dir: %w", err)
		}
		h.CacheDir, h.tempDir = dir, dir
	}
	return nil
}

// Plugin is a compiled normalizer, ready to run any number of times.
type Plugin struct {
	// Name is the source the plugin normalizes, for example "hcdump".
	Name string
	// SHA256 is the hex digest of the module's bytes.
	SHA256 string

	host     *Host
	compiled wazero.CompiledModule // nil when runs happen in children
	wasm     []byte                // the module, sent to each child
	native   guest.Normalizer      // set by LoadNative: the module's code, compiled in
}

// Load compiles a module for the source name. It fails when the bytes are
// not a valid module or do not export the WASI start function.
func (h *Host) Load(ctx context.Context, name string, wasm []byte) (*Plugin, error) {
	if h.runtime == nil {
		return nil, fmt.Errorf("loading plugin %s: host is not open", name)
	}
	compiled, err := h.runtime.CompileModule(ctx, wasm)
	if err != nil {
		return nil, fmt.Errorf("compiling plugin %s: %w", name, err)
	}
	if _, ok := compiled.ExportedFunctions()["_start"]; !ok {
		_ = compiled.Close(ctx)
		return nil, fmt.Errorf("compiling plugin %s: the module exports no _start function; build it as a WASI command (GOOS=wasip1)", name)
	}
	p := &Plugin{Name: name, SHA256: SHA256(wasm), host: h, compiled: compiled}
	if h.child() {
		// Compiling here checked the module and left its machine code in
		// the cache on disk, where children find it; this process never
		// runs it, so it need not keep it.
		_ = compiled.Close(ctx)
		p.compiled, p.wasm = nil, wasm
	}
	return p, nil
}

// SHA256 returns the hex digest that names a module in Status and /health.
func SHA256(wasm []byte) string {
	sum := sha256.Sum256(wasm)
	return hex.EncodeToString(sum[:])
}

// Close releases the compiled module.
func (p *Plugin) Close(ctx context.Context) error {
	if p.compiled == nil {
		return nil
	}
	return p.compiled.Close(ctx)
}

func (h *Host) logger() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.Default()
}
