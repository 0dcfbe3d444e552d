// Package kv is the durable record store: it keeps every recall record and
// its secondary index keys in Pebble (github.com/cockroachdb/pebble/v2) and
// implements rappel.RecordStore.
//
// # Key layout
//
// Every key starts with a short table prefix naming its keyspace:
//
//	| Keyspace | Key                                                              | Value                             |
//	|----------|------------------------------------------------------------------|-----------------------------------|
//	| records  | r/<record_id>                                                    | 0x01, then the record's JSON      |
//	| index    | i/<field>/<value>\x00\x01<record_id>                             | empty                             |
//	| vehicles | i/vehicle/<MAKE>\x00\x01<year>\x00\x01<MODEL>\x00\x01<record_id> | empty                             |
//	| meta     | m/schema                                                         | schema version, one byte          |
//	| meta     | m/dataset                                                        | 0x01, then the DatasetInfo's JSON |
//	| meta     | m/newrecalls                                                     | last new-recalls seq, 8 bytes BE  |
//	| meta     | m/recordevents                                                   | last record-events seq, 8 bytes BE |
//	| meta     | m/changes                                                        | change log generation, floor: 8 bytes BE each |
//	| meta     | m/indexstate                                                     | 0x01, then the read index's state |
//	| meta     | m/probe                                                          | last probe of a failing storage, Unix ns, 8 bytes BE |
//	| changes  | c/<seq, 8 bytes BE>                                              | 0x01 put or 0x02 delete, then the record_id |
//	| partials | s/<source>/<record_id>                                           | 0x01, 16-byte content hash, JSON  |
//	| feeds    | f/state/<source>                                                 | 0x01, then the SourceState's JSON |
//	| feeds    | f/raw/<source>/<key>                                             | 0x01, then the RawRecord's JSON   |
//	| feeds    | f/data/<source>/<key>                                            | 0x01, then the raw bytes          |
//	| outbox   | o/new/<seq, 8 bytes BE>                                          | 0x01, then the NewRecalls' JSON   |
//	| outbox   | o/ev/<seq, 8 bytes BE>                                           | 0x01, then the RecordEvents' JSON |
//	| alerts   | a/sub/<subscription_id>                                          | 0x01, then the Subscription's JSON |
//	| alerts   | a/tok/<SHA-256 of a token, 32 bytes>                             | 0x01, then {sub, kind} JSON       |
//	| alerts   | a/out/<subscription_id>\x00<record_id>                           | 0x01, then the AlertRow's JSON    |
//	| alerts   | a/matched/<record_id>                                            | when the recall was matched       |
//	| alerts   | a/allow/<allowance name, never an address in clear>              | 0x01, then {used, until} JSON     |
//	| alerts   | a/confirm/<subscription_id>\x00confirm                           | 0x01, then the AlertRow's JSON    |
//	| usage    | u/<YYYY-MM>/<key id>                                             | requests that month, 8 bytes BE   |
//	| webhooks | w/hook/<endpoint_id>                                             | 0x01, then the Webhook's JSON     |
//	| webhooks | w/out/<endpoint_id>\x00<event key>                               | 0x01, then the AlertRow's JSON    |
//	| webhooks | w/matched/<event key>                                            | when the event was matched        |
//
// API keys live in a database of their own (Keys, the data dir's "keys"),
// which rappel keys can open while a server runs:
//
//	| Keyspace | Key                                                              | Value                             |
//	|----------|------------------------------------------------------------------|-----------------------------------|
//	| keys     | k/<SHA-256 of the key, 32 bytes>                                 | 0x01, then the APIKey's JSON      |
//
// The key itself is stored nowhere; its ID is the hex of its hash's first
// six bytes, so that a key found by hash and a key named by ID are the same.
//
// The single-value index fields are type (recall_type), agency,
// hazard_class, allergen (one key per allergen), category, status,
// event_date, recall_date, recall_id, gtin (the GTIN-14 of every product
// UPC and of the record's own upc that rappel.ParseGTIN accepts) and
// gtin_prefix (the GTIN-14 prefixes, rappel.UPCPrefixGTINs, of every
// product's upc_prefix: a keyspace of its own, so that an exact lookup
// never meets a prefix). Vehicle keys come from affected_models, make and
// model upper-cased with runs of spaces collapsed, year in decimal (0 when
// unknown); the year comes before the model so that "any model of this
// make and year" is one prefix scan.
//
// Field names are fixed identifiers without '/'. Each value is escaped so
// that no value can run into the next: a 0x00 byte inside a value is written
// 0x00 0xFF, and every value ends with the terminator 0x00 0x01. So the
// prefix i/<field>/<value>\x00\x01 of one value is never a prefix of a key
// for any other value, the index is prefix-free, and the escaping keeps
// values in byte order (dates sort as dates). The record_id is the rest of
// the key and needs no escaping. Empty values are not indexed, and values
// are indexed as the stored record reads back: encoding/json turns each
// byte of invalid UTF-8 into U+FFFD, so the index does too.
//
// Values carry a leading version byte so that their encoding can change
// without a flag day; reading a version the code does not know is an error,
// never a guess. The schema version in m/schema covers the key layout and
// the way index keys are derived from a record: when it is older than the
// code's (or absent from a store holding records), Open rebuilds the index
// from the records; when it is newer, Open refuses the store.
//
// Partial records are what each source's plugin emitted for a record_id,
// before rappel.Assemble merges the sources into the records under r/; a
// refresh of one source re-assembles only the record_ids whose partials
// changed. Raw records are the upstream records the partials came from,
// kept so that a new plugin can be run on them and so that a refresh
// normalizes only those whose hash changed. The outbox holds, per refresh,
// the record_ids that were new, until the alerts acknowledge them.
//
// # Writes
//
// PutRecords and DeleteRecords read each record's stored version, delete the
// index keys it no longer has, and write everything in one batch committed
// with pebble.Sync: once they return nil the change survives a crash, and a
// crash before that leaves none of it. ApplySource writes one source's
// refresh (partials, raw records, state, assembled records and their index
// keys, dataset info, new recalls) the same way, in one batch. Writes are
// serialized by the Store; reads run concurrently with them and with each
// other.
//
// # Change log
//
// Each of those batches also appends to the change log one entry per
// record it actually changed (a put of the bytes already stored is not a
// change), numbered in commit order, so that a reader keeping its own copy
// of the records (the read index's segments) can catch up from a number
// instead of reading everything: ChangeSeq, Changes, TrimChanges. A full
// load (Load, Replace, Ingest) logs no entries: it starts a new
// generation, in the same batch or ingestion, and a reader of an older
// generation reads the dataset again.
package kv
