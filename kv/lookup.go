package kv

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rappel-ca/rappel"
)

// Index fields, each with a lookup of its own: the barcode, recall-number
// and VIN look-ups of the API. Filters are the read index's (kv/index),
// not the store's: keys for them would be written on every put and never
// read.
const (
	fieldRecallID = "recall_id"
	fieldGTIN     = "gtin"
	fieldGTINPre  = "gtin_prefix" // rappel.UPCPrefixGTINs of each product's upc_prefix
	fieldVehicle  = "vehicle"     // make, year, model
)

// Store serves the barcode and VIN lookups from its index keys.
var _ rappel.Lookup = (*Store)(nil)

// fieldArity is the number of values of each index field's keys.
func fieldArity(field string) int {
	if field == fieldVehicle {
		return 3
	}
	return 1
}

// indexKeys returns the index keys of r, sorted, without duplicates. Empty
// values are not indexed.
func indexKeys(r *rappel.Record) [][]byte {
	keys := make([][]byte, 0, 16)
	add := func(field, value string) {
		if value != "" {
			keys = append(keys, indexKey(field, []string{indexValue(value)}, r.RecordID))
		}
	}
	add(fieldRecallID, r.RecallID)
	for _, g := range r.GTINs() {
		add(fieldGTIN, string(g))
	}
	for _, p := range r.ProductList {
		for _, g := range rappel.UPCPrefixGTINs(p.UPCPrefix) {
			add(fieldGTINPre, g)
		}
	}
	for _, m := range r.AffectedModels {
		mk := NormalizeVehicle(m.Make)
		if mk == "" {
			continue
		}
		keys = append(keys, indexKey(fieldVehicle, []string{mk, strconv.Itoa(m.Year), NormalizeVehicle(m.Model)}, r.RecordID))
	}
	slices.SortFunc(keys, bytes.Compare)
	return slices.CompactFunc(keys, bytes.Equal)
}

// indexValue is v as a record stored and read back holds it: encoding/json
// replaces each byte of invalid UTF-8 by U+FFFD. Index keys must be derived
// from that form, or the keys of a stored version would differ from those
// written with it and be left behind when it is replaced.
func indexValue(v string) string {
	if utf8.ValidString(v) {
		return v
	}
	var b strings.Builder
	for _, c := range v { // yields U+FFFD for each invalid byte
		b.WriteRune(c)
	}
	return b.String()
}

// NormalizeVehicle is the form of a make or model in the index: upper case,
// without leading or trailing spaces, runs of spaces collapsed to one.
func NormalizeVehicle(s string) string {
	return strings.ToUpper(strings.Join(strings.Fields(indexValue(s)), " "))
}

// RecordIDsByGTIN returns the ids of the records with a product, or a upc,
// whose barcode is g (a GTIN-14 from rappel.ParseGTIN), in record_id order.
func (s *Store) RecordIDsByGTIN(ctx context.Context, g rappel.GTIN) ([]string, error) {
	return s.scanIDs(ctx, indexKeyPrefix(fieldGTIN, string(g)), 0)
}

// RecordIDsByGTINPrefix returns the ids of the records with a product whose
// upc_prefix the code g (a GTIN-14 from rappel.ParseGTIN) starts with, in
// record_id order. Each of g's prefixes from rappel.MinUPCPrefix+1 to
// rappel.MaxUPCPrefixGTIN digits is looked up on one iterator: the keys of
// one prefix sort before those of the next longer one (a value's
// terminator sorts before any digit), so each seek moves forward and only
// matching keys are read.
func (s *Store) RecordIDsByGTINPrefix(ctx context.Context, g rappel.GTIN) ([]string, error) {
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	lo, hi := rappel.MinUPCPrefix+1, min(len(g), rappel.MaxUPCPrefixGTIN)
	if hi < lo {
		return nil, nil
	}
	// Bound the iterator to the values starting with g's shortest prefix.
	bound := append([]byte(indexPrefix+fieldGTINPre+"/"), g[:lo]...)
	it, err := s.db.NewIterWithContext(ctx, prefixOptions(bound))
	if err != nil {
		return nil, fmt.Errorf("opening iterator: %w", err)
	}
	defer it.Close()
	var ids []string
	for n := lo; n <= hi; n++ {
		prefix := indexKeyPrefix(fieldGTINPre, string(g[:n]))
		for it.SeekGE(prefix); it.Valid() && bytes.HasPrefix(it.Key(), prefix); it.Next() {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			ids = append(ids, string(it.Key()[len(prefix):]))
		}
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("scanning index: %w", err)
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

// RecordIDsByVehicle returns the ids of the records whose affected_models
// cover make, model and year, in record_id order. make and model are
// compared after NormalizeVehicle; an empty model matches every model of
// that make and year.
func (s *Store) RecordIDsByVehicle(ctx context.Context, make, model string, year int) ([]string, error) {
	values := []string{NormalizeVehicle(make), strconv.Itoa(year)}
	if model = NormalizeVehicle(model); model == "" {
		return s.scanIDs(ctx, indexKeyPrefix(fieldVehicle, values...), 1)
	}
	return s.scanIDs(ctx, indexKeyPrefix(fieldVehicle, append(values, model)...), 0)
}

// RecordIDsByRecallID returns the ids of the records whose recall_id is
// recallID (several records may share one), in record_id order.
func (s *Store) RecordIDsByRecallID(ctx context.Context, recallID string) ([]string, error) {
	return s.scanIDs(ctx, indexKeyPrefix(fieldRecallID, indexValue(recallID)), 0)
}

// scanIDs returns the record_ids of the index keys starting with prefix,
// after skipping the skip values that follow it, sorted and without
// duplicates. ctx is checked between keys.
func (s *Store) scanIDs(ctx context.Context, prefix []byte, skip int) ([]string, error) {
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	it, err := s.db.NewIterWithContext(ctx, prefixOptions(prefix))
	if err != nil {
		return nil, fmt.Errorf("opening iterator: %w", err)
	}
	defer it.Close()
	var ids []string
	for it.First(); it.Valid(); it.Next() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rest := it.Key()[len(prefix):]
		for range skip {
			var ok bool
			if _, rest, ok = cutValue(rest); !ok {
				return nil, fmt.Errorf("scanning index: %w: %q", errBadKey, it.Key())
			}
		}
		ids = append(ids, string(rest))
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("scanning index: %w", err)
	}
	if skip > 0 {
		slices.Sort(ids)
		ids = slices.Compact(ids)
	}
	return ids, nil
}
