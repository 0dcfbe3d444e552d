package feeds

import (
	"context"

	"github.com/rappel-ca/rappel"
)

// Why a refresh failed (rappel.FeedFailure) is decided where the failure
// arises: the Fetcher's errors are fetch failures, a format's split's are
// parse failures, the plugin's run's are plugin failures, the removal
// checks' are suspicious removals, and every error of the store, which
// the refresher reads and writes only through storeErrors, is a storage
// failure. failed records the reason beside the sentence.

// store returns r's store, its errors classified as storage failures.
func (r *Refresher) store() storeErrors { return storeErrors{r.Store} }

// storeErrors is a FeedStore whose every error that carries no reason yet
// is a storage failure. An error a callback returns keeps its own.
type storeErrors struct{ rappel.FeedStore }

func storage(err error) error { return rappel.Fail(rappel.FailureStorage, err) }

func (s storeErrors) SourceState(ctx context.Context, source string) (rappel.SourceState, error) {
	st, err := s.FeedStore.SourceState(ctx, source)
	return st, storage(err)
}

func (s storeErrors) SourceStates(ctx context.Context) ([]rappel.SourceState, error) {
	st, err := s.FeedStore.SourceStates(ctx)
	return st, storage(err)
}

func (s storeErrors) PartialHashes(ctx context.Context, source string, fn func(id, hash string) error) error {
	return storage(s.FeedStore.PartialHashes(ctx, source, fn))
}

func (s storeErrors) Partials(ctx context.Context, source string, ids []string) (map[string]*rappel.Record, error) {
	p, err := s.FeedStore.Partials(ctx, source, ids)
	return p, storage(err)
}

func (s storeErrors) RawIndex(ctx context.Context, source string, fn func(rappel.RawRecord) error) error {
	return storage(s.FeedStore.RawIndex(ctx, source, fn))
}

func (s storeErrors) RawData(ctx context.Context, source string, fn func(rappel.RawRecord) error) error {
	return storage(s.FeedStore.RawData(ctx, source, fn))
}

func (s storeErrors) ApplySource(ctx context.Context, c *rappel.SourceChange) error {
	return storage(s.FeedStore.ApplySource(ctx, c))
}

func (s storeErrors) Replace(ctx context.Context, recs []*rappel.Record, partials map[string][]*rappel.Record, raw map[string][]rappel.RawRecord, states []rappel.SourceState, info rappel.DatasetInfo) error {
	return storage(s.FeedStore.Replace(ctx, recs, partials, raw, states, info))
}

func (s storeErrors) DatasetInfo(ctx context.Context) (rappel.DatasetInfo, error) {
	info, err := s.FeedStore.DatasetInfo(ctx)
	return info, storage(err)
}

func (s storeErrors) Record(ctx context.Context, id string) (*rappel.Record, error) {
	rec, err := s.FeedStore.Record(ctx, id)
	return rec, storage(err)
}

// failureOf is err's reason. A failure that arose nowhere classified (a
// refresh cut short between two steps, say) is counted where the refresh
// spends its time waiting on others: fetching.
func failureOf(err error) rappel.FeedFailure {
	if f := rappel.FailureOf(err); f != "" {
		return f
	}
	return rappel.FailureFetch
}
