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
	// Interruptible compiles guests with deadline checks (wazero's
	// WithCloseOnContextDone), so a runaway guest is stopped at Timeout or
	// when ctx is done. The checks cost about 5x in guest speed (hcdump on
	// the full corpus: 9.7 s without, 52.9 s with; see RATIONALE.md).
	// Without them a guest cannot be stopped once started: turn it off only
	// for trusted plugins, such as the shipped ones at build time.
	Interruptible bool
	Logger        *slog.Logger

	runtime wazero.Runtime
	cache   wazero.CompilationCache
}

// NewHost returns a Host with defaults sized for the national feeds: 1 GiB
// of guest memory, two minutes, 512 MiB of output, two million records.
func NewHost() *Host {
	return &Host{
		MemoryLimitPages: 16384,
		Timeout:          2 * time.Minute,
		MaxOutput:        512 << 20,
		MaxRecords:       2_000_000,
		Interruptible:    true,
		Logger:           slog.Default(),
	}
}

// Open creates the runtime and its compilation cache. Settings that shape
// compiled code (MemoryLimitPages, Interruptible) are read here.
func (h *Host) Open(ctx context.Context) error {
	var err error
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
		WithCloseOnContextDone(h.Interruptible)
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
	return err
}

// Plugin is a compiled normalizer, ready to run any number of times.
type Plugin struct {
	// Name is the source the plugin normalizes, for example "hcdump".
	Name string
	// SHA256 is the hex digest of the module's bytes.
	SHA256 string

	host     *Host
	compiled wazero.CompiledModule
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
	sum := sha256.Sum256(wasm)
	return &Plugin{Name: name, SHA256: hex.EncodeToString(sum[:]), host: h, compiled: compiled}, nil
}

// Close releases the compiled module.
func (p *Plugin) Close(ctx context.Context) error { return p.compiled.Close(ctx) }
