// Package plugins runs feed normalizers: WebAssembly (WASI preview 1)
// modules that turn a source's raw documents into canonical records.
//
// A Host owns one wazero runtime whose compiled modules are cached on disk.
// Each Run instantiates a fresh module with the source's files mounted
// read-only at /in, no network, no host file system, no environment, a
// memory page limit, an output size cap and a deadline that stops a runaway
// guest. The module writes records as JSON lines on stdout and problems as
// JSON lines on stderr; see ABI.md for the contract an integrator implements.
//
// The normalizers shipped with the service live in subpackages (hcdump,
// vrdb, detail) as ordinary Go, with a tiny wasm main each; plugins/guest is
// the guest side of the ABI for plugins written in Go.
package plugins
