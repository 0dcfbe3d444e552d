// Package rappel holds the domain of the Canadian Product and Vehicle Recall
// API: the recall record, its vocabularies, the error type every layer speaks,
// and the interfaces the other packages implement.
//
// It imports the standard library only. The service packages (kv, plugins,
// bundle, edge, feeds, fleet, alerts) depend on it and on the libraries
// beside it (internal/..., vindecode, idn), never on one another: they meet
// through the interfaces defined here, and cmd/rappel wires the
// implementations together. Within a part, the three stores of kv (the
// Pebble store, the search engine kv/index over its segment format
// kv/segment, the fleet's SQL store kv/postgres) do not import one another,
// and the feed parsers compiled to Wasm see only the plugins' guest side.
// Each third-party library is used by the one package that wraps it.
// internal/importrules checks all of this.
package rappel
