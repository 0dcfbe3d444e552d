package fleet

import "testing"

// TestNode_StatusBeforeRun: /health asks for a node's status as soon as
// the node serves, which may be before its Run has begun: the status of a
// node that has not reached the shared store yet is a follower's, not
// ready, degraded, and asking for it does not panic.
func TestNode_StatusBeforeRun(t *testing.T) {
	n := &Node{Name: "a"}
	st, stats := n.Status(), n.Stats()
	if st.Ready || !st.Degraded || stats.Leading || stats.Ready || !stats.Degraded {
		t.Fatalf("status before Run: %+v, %+v", st, stats)
	}
}
