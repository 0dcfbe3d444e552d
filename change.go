package rappel

import "context"

// ChangeListener is told when the stored data has changed, so that what is
// derived from it (the read index, alert matching) follows without anyone
// in between: the feeds' refresher calls every listener it was given after
// each refresh, in order.
type ChangeListener interface {
	// DataChanged is called after a refresh committed to the store.
	// records is true when records changed since the listener last
	// caught up, false when only the dataset's info (its refresh time)
	// moved. An error is logged by the caller, and the next refresh calls
	// again with records true.
	DataChanged(ctx context.Context, records bool) error
}
