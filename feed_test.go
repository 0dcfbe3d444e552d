package rappel

import (
	"errors"
	"fmt"
	"testing"
)

// TestFail_KeepsTheReasonWhereItArose: a failure wrapped on its way up,
// and wrapped again with another reason, keeps the reason it was given
// first, and its message is its cause's.
func TestFail_KeepsTheReasonWhereItArose(t *testing.T) {
	cause := errors.New("the upstream answered 503 Service Unavailable")
	err := Fail(FailureFetch, cause)
	err = fmt.Errorf("refreshing hcdump: %w", err)
	err = Fail(FailureStorage, err)
	if got := FailureOf(err); got != FailureFetch {
		t.Errorf("FailureOf = %q, want %q", got, FailureFetch)
	}
	if !errors.Is(err, cause) || err.Error() != "refreshing hcdump: the upstream answered 503 Service Unavailable" {
		t.Errorf("err = %q, want the cause's message, wrapped", err)
	}
	if FailureOf(cause) != "" || FailureOf(nil) != "" || Fail(FailureParse, nil) != nil {
		t.Error("an error without a reason, or nil, has one")
	}
	// The reasons are label values and JSON words: lower case, no spaces.
	for _, f := range FeedFailures {
		for _, r := range string(f) {
			if (r < 'a' || r > 'z') && r != '_' {
				t.Errorf("reason %q is not a lower-case word", f)
			}
		}
	}
}
