// Package importrules holds, in its test, the module's rules of which
// package may import which, so that the rules the documentation states
// are checked rather than trusted (RATIONALE.md, the domain package).
package importrules
