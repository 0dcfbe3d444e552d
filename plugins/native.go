package plugins

import (
	"io"
	"io/fs"

	"github.com/tetratelabs/wazero/sys"

	"github.com/rappel-ca/rappel/plugins/guest"
)

// LoadNative returns a plugin for the source name that stands for the
// module wasm but runs normalize, the Go code that module was compiled
// from, compiled into this binary. Its runs speak the module's line
// protocol (guest.Run) into the same readers as a module's, so its records
// and problems are decoded and checked exactly as the module's are; only
// the machine differs. Its SHA256 is the module's, since the records are
// the module's records.
//
// It is for the shipped plugins at build time (`rappel bundle`), whose code
// is trusted and whose Wasm runs are several times slower: nothing stops a
// native run, so the Host's Timeout and memory limit do not apply. That
// normalize is what wasm was built from is the caller's promise, which a
// test keeps by running both on the same input.
func (h *Host) LoadNative(name string, wasm []byte, normalize guest.Normalizer) *Plugin {
	return &Plugin{Name: name, SHA256: SHA256(wasm), host: h, native: normalize}
}

// runNative runs the plugin's native normalizer as its module would run,
// with the host's arguments.
func (p *Plugin) runNative(input fs.FS, stdout, stderr io.Writer) guestEnd {
	if code := guest.Run([]string{p.Name, ABIVersion}, input, stdout, stderr, p.native); code != 0 {
		return guestEnd{err: sys.NewExitError(uint32(code))}
	}
	return guestEnd{}
}
