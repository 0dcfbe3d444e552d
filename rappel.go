// Package rappel holds the domain of the Canadian Product and Vehicle Recall
// API: the recall record, its vocabularies, the error type every layer speaks,
// and the interfaces the other packages implement.
//
// It imports the standard library only. Every other package of the module
// depends on it and on nothing else of the module except through these
// interfaces; cmd/rappel wires the implementations together.
package rappel
