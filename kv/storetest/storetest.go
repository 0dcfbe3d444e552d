// Package storetest holds contract tests: one suite per interface of the
// domain package, run against every implementation of it (the Pebble
// stores of package kv and the shared store of package kv/postgres), so
// that a node behaves the same whichever store it is given.
//
// A suite takes a function returning two handles on one fresh, empty
// store, as two nodes (or a node and `rappel keys`) would hold it; an
// implementation that has only one handle per store returns it twice.
package storetest
