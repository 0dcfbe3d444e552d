// Package plugins runs feed normalizers: WebAssembly (WASI preview 1)
// modules that turn a source's raw documents into canonical records.
//
// A Host owns one wazero runtime whose compiled modules are cached on disk.
// Each Run instantiates a fresh module with the source's files mounted
// read-only at /in, no network, no host file system, no environment, a
// memory page limit, an output size cap and a deadline that stops a runaway
// guest. By default a run happens in a child process (this executable
// again, as "rappel plugin-child", whose main calls RunChild) that is
// killed at the deadline; RATIONALE.md says why. Importing the package
// does nothing by itself. The module writes records as JSON lines on
// stdout and problems as JSON lines on stderr; see ABI.md
// for the contract an integrator implements.
//
// Judge validates a run's records as the host does before accepting them.
// A Registry holds the active plugin of each source, implements
// rappel.Normalizer with them, and replaces one at run time with a
// candidate from a watched directory only after trying it on the source's
// last good payload (Baseline.Accept). A Verifier checks, before that, that
// a candidate carries a minisign signature by a trusted key (sign.go), and
// again at every start that a plugin kept in ActiveDir still does.
//
// The normalizers shipped with the service live in subpackages (hcdump,
// vrdb, detail) as ordinary Go, with a tiny wasm main each; plugins/guest is
// the guest side of the ABI for plugins written in Go.
package plugins
