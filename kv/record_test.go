package kv

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/rappel-ca/rappel"
)

// TestFixture checks that the fixture sets every field of rappel.Record, so
// that a field added to the record is covered by the round trip test once
// the fixture sets it.
func TestFixture(t *testing.T) {
	r := fixture(t)
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	var check func(path string, v reflect.Value)
	check = func(path string, v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() {
				if !optionalInFixture[path] {
					t.Errorf("fixture leaves %s unset", path)
				}
				return
			}
			check(path, v.Elem())
		case reflect.Struct:
			for i := range v.NumField() {
				check(path+"."+v.Type().Field(i).Name, v.Field(i))
			}
		case reflect.Slice:
			if v.Len() == 0 && !optionalInFixture[path] {
				t.Errorf("fixture leaves %s empty", path)
			}
			for i := range v.Len() {
				if e := v.Index(i); e.Kind() == reflect.Struct {
					check(fmt.Sprintf("%s[%d]", path, i), e)
				}
			}
		default:
			if v.IsZero() && !optionalInFixture[path] {
				t.Errorf("fixture leaves %s unset", path)
			}
		}
	}
	check("Record", reflect.ValueOf(r))
}

// optionalInFixture are fields the fixture leaves unset on purpose: its
// first two products have a UPC and no prefix, its third, sold by weight,
// a prefix, no lot codes (and a UPC printed "None"). The first product's
// applicability sets every field; the others have none.
var optionalInFixture = map[string]bool{
	"Record.ProductList[0].UPCPrefix":     true,
	"Record.ProductList[1].UPCPrefix":     true,
	"Record.ProductList[1].Applicability": true,
	"Record.ProductList[2].LotCodes":      true,
	"Record.ProductList[2].Applicability": true,
}

// makeRecord returns a small valid record numbered i. Records vary in type,
// agency, status, hazard class and allergens; food records have a product
// with a valid UPC-A, vehicle records affected models. Two consecutive
// records share a recall_id.
func makeRecord(i int) *rappel.Record {
	typ := rappel.RecallTypes[i%len(rappel.RecallTypes)]
	r := &rappel.Record{
		RecordID:    fmt.Sprintf("hc-%06d", i),
		RecallID:    fmt.Sprintf("RA-%d", 60000+i/2),
		RecallType:  typ,
		Agency:      rappel.AgencyHealthCanada,
		Status:      rappel.Statuses[i%2],
		EventDate:   fmt.Sprintf("20%02d-%02d-%02d", 10+i%15, 1+i%12, 1+i%28),
		RecallDate:  fmt.Sprintf("20%02d-%02d-%02d", 10+i%15, 1+i%12, 1+i%28),
		FetchedAt:   "2025-01-02T03:04:05Z",
		Category:    []string{"Food", "Electronics", "Toys", "Drugs"}[i%4],
		HazardClass: rappel.HazardClasses[i%3],
		Translations: rappel.Translations{
			EN: &rappel.Translation{Title: fmt.Sprintf("Product %d recalled", i), WhatToDo: "Stop using it."},
			FR: &rappel.Translation{Title: fmt.Sprintf("Rappel du produit %d", i)},
		},
	}
	switch typ {
	case rappel.TypeFood:
		r.Agency = rappel.AgencyCFIA
		body := fmt.Sprintf("0%010d", i)
		r.ProductList = []rappel.Product{{Name: "Cookies", UPC: fmt.Sprintf("%s%d", body, rappel.CheckDigit(body)), Size: "350 g"}}
		r.Allergens = []string{rappel.Allergens[i%len(rappel.Allergens)]}
	case rappel.TypeVehicle:
		r.Agency = rappel.AgencyTransportCanada
		r.AffectedModels = []rappel.VehicleModel{
			{Make: "FORD", Model: "F-150", Year: 2015 + i%10},
			{Make: "FORD", Model: "ESCAPE", Year: 2015 + i%10},
		}
	}
	return r
}

// makeRecords returns makeRecord(0) to makeRecord(n-1).
func makeRecords(n int) []*rappel.Record {
	recs := make([]*rappel.Record, n)
	for i := range recs {
		recs[i] = makeRecord(i)
	}
	return recs
}

func TestStore_PutRecords(t *testing.T) {
	ctx := context.Background()

	t.Run("OK", func(t *testing.T) {
		s := MustOpenStore(t)
		r := fixture(t)
		r2 := makeRecord(2)
		MustPut(t, s, r, r2)
		for _, want := range []*rappel.Record{r, r2} {
			got, err := s.Record(ctx, want.RecordID)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Error(jsonDiff(t, got, want))
			}
		}
		checkIndex(t, s)
	})

	t.Run("Large", func(t *testing.T) {
		if testing.Short() || raceEnabled {
			t.Skip("puts 41k records")
		}
		s := MustOpenStoreAt(t, "db", vfs.NewMem())
		recs := makeRecords(41_000)
		MustPut(t, s, recs...)
		n := 0
		if err := s.ForEachRecord(ctx, func(*rappel.Record) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		if n != len(recs) {
			t.Errorf("stored %d records, want %d", n, len(recs))
		}
		checkIndex(t, s)
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		s := MustOpenStore(t)
		MustPut(t, s, fixture(t))
		_, err := s.Record(ctx, "hc-unknown")
		if code := rappel.ErrorCode(err); code != rappel.ENOTFOUND {
			t.Errorf("Record(unknown) error %v has code %q, want %q", err, code, rappel.ENOTFOUND)
		}
		if errors.Is(err, pebble.ErrNotFound) {
			t.Error("Record(unknown) lets pebble.ErrNotFound cross the boundary")
		}
	})

	t.Run("LastOfSameIDWins", func(t *testing.T) {
		s := MustOpenStoreAt(t, "db", vfs.NewMem())
		a, b := fixture(t), fixture(t)
		b.RecallType = rappel.TypeCannabis
		b.ProductList = nil
		MustPut(t, s, a, b)
		got, err := s.Record(ctx, a.RecordID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, b) {
			t.Error(jsonDiff(t, got, b))
		}
		checkIndex(t, s)
	})

	t.Run("Unchanged", func(t *testing.T) {
		s := MustOpenStoreAt(t, "db", vfs.NewMem())
		MustPut(t, s, fixture(t))
		MustPut(t, s, fixture(t))
		checkIndex(t, s)
	})

	t.Run("ErrNoRecordID", func(t *testing.T) {
		s := MustOpenStoreAt(t, "db", vfs.NewMem())
		err := s.PutRecords(ctx, []*rappel.Record{fixture(t), {}})
		if code := rappel.ErrorCode(err); code != rappel.EINVALID {
			t.Errorf("PutRecords of a record without id: %v, code %q; want %q", err, code, rappel.EINVALID)
		}
		if empty, _ := s.Empty(ctx); !empty {
			t.Error("a refused PutRecords wrote records")
		}
	})

	t.Run("Canceled", func(t *testing.T) {
		s := MustOpenStoreAt(t, "db", vfs.NewMem())
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := s.PutRecords(cctx, makeRecords(10)); !errors.Is(err, context.Canceled) {
			t.Errorf("PutRecords with a canceled context: %v", err)
		}
		if keys := allKeys(t, s, ""); len(keys) != 1 { // the schema version
			t.Errorf("a canceled PutRecords left keys %q", keys)
		}
	})

	t.Run("ErrUnknownValueVersion", func(t *testing.T) {
		s := MustOpenStoreAt(t, "db", vfs.NewMem())
		if err := s.db.Set(recordKey("hc-1"), []byte("\x02{}"), pebble.Sync); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Record(ctx, "hc-1"); err == nil {
			t.Error("Record decoded an unknown value version")
		}
		// Its index keys cannot be known, so it cannot be replaced.
		r := makeRecord(1)
		r.RecordID = "hc-1"
		if err := s.PutRecords(ctx, []*rappel.Record{r}); err == nil {
			t.Error("PutRecords replaced a value of an unknown version")
		}
	})
}

func TestStore_ForEachRecord(t *testing.T) {
	ctx := context.Background()
	s := MustOpenStoreAt(t, "db", vfs.NewMem())
	recs := makeRecords(50)
	MustPut(t, s, recs...)
	var ids []string
	err := s.ForEachRecord(ctx, func(r *rappel.Record) error {
		ids = append(ids, r.RecordID)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != len(recs) || !slices.IsSorted(ids) {
		t.Errorf("ForEachRecord visited %d records, sorted %v; want %d sorted", len(ids), slices.IsSorted(ids), len(recs))
	}

	t.Run("StopsAtError", func(t *testing.T) {
		stop := errors.New("stop")
		n := 0
		err := s.ForEachRecord(ctx, func(*rappel.Record) error {
			n++
			if n == 3 {
				return stop
			}
			return nil
		})
		if err != stop || n != 3 {
			t.Errorf("ForEachRecord = %v after %d calls; want stop after 3", err, n)
		}
	})

	t.Run("Canceled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		n := 0
		err := s.ForEachRecord(cctx, func(*rappel.Record) error {
			if n++; n == 2 {
				cancel()
			}
			return nil
		})
		if !errors.Is(err, context.Canceled) || n != 2 {
			t.Errorf("ForEachRecord = %v after %d calls; want context.Canceled after 2", err, n)
		}
	})
}

func TestStore_DeleteRecords(t *testing.T) {
	ctx := context.Background()
	s := MustOpenStore(t)
	recs := append(makeRecords(20), fixture(t))
	MustPut(t, s, recs...)
	var ids []string
	for _, r := range recs[:10] {
		ids = append(ids, r.RecordID)
	}
	ids = append(ids, "hc-never-stored", ids[0])
	if err := s.DeleteRecords(ctx, ids); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if _, err := s.Record(ctx, id); rappel.ErrorCode(err) != rappel.ENOTFOUND {
			t.Errorf("Record(%q) after delete: %v", id, err)
		}
	}
	checkIndex(t, s)

	var rest []string
	for _, r := range recs[10:] {
		rest = append(rest, r.RecordID)
	}
	if err := s.DeleteRecords(ctx, rest); err != nil {
		t.Fatal(err)
	}
	if keys := allKeys(t, s, indexPrefix); len(keys) != 0 {
		t.Errorf("index keys left after deleting every record: %q", keys)
	}
	if keys := allKeys(t, s, recordPrefix); len(keys) != 0 {
		t.Errorf("record keys left after deleting every record: %q", keys)
	}
}

func TestDecodeValue(t *testing.T) {
	var r rappel.Record
	for _, val := range []string{"", "\x00{}", "\x02{}", "\x01{"} {
		if err := decodeValue([]byte(val), &r); err == nil {
			t.Errorf("decodeValue(%q) succeeded", val)
		}
	}
	if err := decodeValue([]byte("\x01{\"record_id\":\"hc-1\"}"), &r); err != nil || r.RecordID != "hc-1" {
		t.Errorf("decodeValue = %v, record_id %q", err, r.RecordID)
	}
}

// TestStore_PutRecords_Concurrent has writers replace the same records at
// once, with readers looking up meanwhile: the index must end up matching
// the records, with no key of a version another writer replaced.
func TestStore_PutRecords_Concurrent(t *testing.T) {
	ctx := context.Background()
	s := MustOpenStoreAt(t, "db", vfs.NewMem())
	errs := make(chan error, 8)
	for w := range 4 {
		go func() {
			for round := range 10 {
				recs := makeRecords(20)
				for _, r := range recs {
					r.RecallType = rappel.RecallTypes[(w+round)%len(rappel.RecallTypes)]
					r.Category = fmt.Sprint("writer ", w)
				}
				if err := s.PutRecords(ctx, recs); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		go func() {
			for range 50 {
				if _, err := s.RecordIDsByRecallID(ctx, "RA-60001"); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	checkIndex(t, s)
}
