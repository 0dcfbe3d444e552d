// Package feeds keeps the recall records fresh from the agencies' feeds:
// Health Canada's recalls dump (English and French JSON), Transport
// Canada's vehicle recall database (CSV) and the detail document of each
// Health Canada notice.
//
// A Refresher fetches every source at an interval (conditional requests,
// retries with capped jittered backoff, a size cap, gzip, a deadline inside
// the interval), cuts each source's documents into raw records, one per
// upstream record, and compares their hashes, taken over a canonical form
// of their content, with the stored ones: only the raw records whose
// content changed go through the source's plugin (a rappel.Normalizer), so
// a refresh where little changed costs little, one where nothing changed
// (a 304, or the same bytes) costs no parsing, and one where only the
// upstream's writer changed costs no plugin run.
// The partial records the plugin emits are compared with the source's
// stored ones by content hash, the records whose partials changed are
// merged again with the other sources' partials (rappel.Assemble), and
// everything (partial records, raw records, assembled records and their
// index keys, the source's state, the dataset info and the record_ids that
// are new, for the alerts) is written in one durable batch by a
// rappel.FeedStore. The refresher then tells its listeners
// (rappel.ChangeListener: the read index, the alerts), which follow the
// store on their own.
//
// A refresh that fails at any step writes nothing but the failure: the last
// good data keeps serving and /health says what happened. A snapshot that
// would empty a source, or remove more than MaxRemoval of a live source's
// records, is refused as suspicious. The bundled records are provisional: a
// source's first live refresh replaces that source's bundled partial records
// entirely.
//
// Detail documents are fetched per notice, only for notices that are new or
// whose row in the dump changed in content, new ones first, with bounded
// concurrency and rate, after the other sources' changes are written and
// the listeners told, within a time budget; notices the budget leaves out
// are found again by the next refresh.
//
// FetchCorpus fetches the same documents, by the same code, into a corpus
// laid out as the generator's, which `rappel bundle --fetch` builds a
// release bundle from; BundleRaw cuts a corpus into the raw records the
// bundle keeps, so that a node's first refresh diffs against them.
package feeds
