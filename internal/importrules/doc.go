// Package importrules holds, in its test, the module's rules of which
// package may import which, so that the rules the documentation states
// are checked rather than trusted (RATIONALE.md, the domain package): the
// parts of the module (allowed), the packages within a part (within), and
// the third-party libraries each may use (libraries). A planted violation
// of each rule is part of the test.
package importrules
