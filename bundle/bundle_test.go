package bundle

import (
	"errors"
	"os"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/rappel-ca/rappel"
)

func rec(id, typ string) *rappel.Record {
	return &rappel.Record{RecordID: id, RecallID: id[3:], RecallType: typ, Agency: rappel.AgencyHealthCanada,
		Status: rappel.StatusActive, EventDate: "2020-02-03", RecallDate: "2020-02-03", FetchedAt: "2020-02-04T00:00:00Z",
		Translations: rappel.Translations{EN: &rappel.Translation{Title: "t " + id}}}
}

func TestWrite_ReadRecords(t *testing.T) {
	dir := t.TempDir()
	recs := []*rappel.Record{rec("hc-1", rappel.TypeFood), rec("hc-2", rappel.TypeFood), rec("tc-3", rappel.TypeVehicle)}
	built := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m := Manifest{BuiltAt: built}
	m.AddProblems([]rappel.Problem{{Source: "hcdump", Reason: "bad"}})
	if err := Write(dir, recs, m); err != nil {
		t.Fatal(err)
	}
	t.Run("OK", func(t *testing.T) {
		got, err := ReadManifest(os.DirFS(dir))
		if err != nil {
			t.Fatal(err)
		}
		if got.Records != 3 || got.ByType[rappel.TypeFood] != 2 || !got.BuiltAt.Equal(built) || got.Problems["hcdump"] != 1 {
			t.Fatalf("manifest = %+v", got)
		}
		var back []*rappel.Record
		if err := ReadRecords(os.DirFS(dir), func(r *rappel.Record) error { back = append(back, r); return nil }); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, recs) {
			t.Fatalf("records differ after the round trip")
		}
	})
	t.Run("StopsOnError", func(t *testing.T) {
		stop := errors.New("stop")
		n := 0
		err := ReadRecords(os.DirFS(dir), func(*rappel.Record) error { n++; return stop })
		if !errors.Is(err, stop) || n != 1 {
			t.Fatalf("err = %v after %d records", err, n)
		}
	})
	t.Run("ErrEmpty", func(t *testing.T) {
		if _, err := ReadManifest(os.DirFS(t.TempDir())); !errors.Is(err, ErrEmpty) {
			t.Fatalf("err = %v, want ErrEmpty", err)
		}
	})
	t.Run("Unsorted", func(t *testing.T) {
		if err := Write(t.TempDir(), []*rappel.Record{recs[1], recs[0]}, Manifest{}); err == nil {
			t.Fatal("unsorted records accepted")
		}
	})
}

func TestWritePartials_ReadPartials(t *testing.T) {
	dir := t.TempDir()
	parts := map[string][]*rappel.Record{
		"hcdump": {rec("hc-2", rappel.TypeFood), rec("hc-1", rappel.TypeFood)},
		"vrdb":   {rec("tc-3", rappel.TypeVehicle)},
	}
	m := Manifest{}
	if err := WritePartials(dir, parts, &m); err != nil {
		t.Fatal(err)
	}
	if m.Partials["hcdump"] != 2 || m.Partials["vrdb"] != 1 {
		t.Fatalf("manifest counts %v", m.Partials)
	}
	var ids []string
	if err := ReadPartials(os.DirFS(dir), "hcdump", func(r *rappel.Record) error { ids = append(ids, r.RecordID); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ids, []string{"hc-1", "hc-2"}) {
		t.Fatalf("hcdump partials %v, want them in record_id order", ids)
	}
	n := 0
	if err := ReadPartials(os.DirFS(dir), "detail", func(*rappel.Record) error { n++; return nil }); err != nil || n != 0 {
		t.Fatalf("a source without partials: %d, %v", n, err)
	}
}

func TestWriteRaw_ReadRaw(t *testing.T) {
	dir := t.TempDir()
	raw := map[string][]rappel.RawRecord{"detail": {
		{Key: "1", Hash: "aa", IDs: []string{"hc-1"}, Version: "v1", Data: []byte("not written")},
		{Key: "2", Hash: "bb"},
	}}
	m := Manifest{}
	if err := WriteRaw(dir, raw, &m); err != nil {
		t.Fatal(err)
	}
	var got []rappel.RawRecord
	if err := ReadRaw(os.DirFS(dir), "detail", func(r rappel.RawRecord) error { got = append(got, r); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []rappel.RawRecord{{Key: "1", Hash: "aa", IDs: []string{"hc-1"}, Version: "v1"}, {Key: "2", Hash: "bb"}}
	if !reflect.DeepEqual(got, want) || m.Raw["detail"] != 2 {
		t.Fatalf("raw records = %+v (manifest %v), want %+v", got, m.Raw, want)
	}
	if err := ReadRaw(os.DirFS(dir), "vrdb", func(rappel.RawRecord) error { t.Fatal("called"); return nil }); err != nil {
		t.Fatal(err)
	}
}

// TestEmbedded checks the bundle compiled into this binary when `make
// bundle` has run, which `make test` guarantees.
func TestEmbedded(t *testing.T) {
	m, err := ReadManifest(Embedded())
	if errors.Is(err, ErrEmpty) && os.Getenv("RAPPEL_TEST_BUNDLE") == "" {
		t.Skip("no bundle embedded; `make test` builds one first and sets RAPPEL_TEST_BUNDLE=1")
	}
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := ReadRecords(Embedded(), func(r *rappel.Record) error {
		n++
		return r.Validate()
	}); err != nil {
		t.Fatal(err)
	}
	if n != m.Records || n < 30000 {
		t.Fatalf("embedded bundle has %d records, manifest says %d", n, m.Records)
	}
	plugins, err := Plugins(Embedded())
	if err != nil || len(plugins) != 3 {
		t.Fatalf("embedded plugins: %d, %v", len(plugins), err)
	}
}

// TestIndexSegment_InPlace checks that the embedded read index is given
// out where the binary holds it: the same bytes at every call, on the
// 8-byte boundary its columns are read in place from (a copy would put the
// whole index in the heap of every node).
func TestIndexSegment_InPlace(t *testing.T) {
	a, version, err := IndexSegment()
	if err != nil {
		t.Fatal(err)
	}
	if a == nil {
		if os.Getenv("RAPPEL_TEST_BUNDLE") != "" {
			t.Fatal("the embedded bundle has no read index")
		}
		t.Skip("no bundle with a read index is embedded; run `make bundle`")
	}
	b, _, _ := IndexSegment()
	if unsafe.SliceData(a) != unsafe.SliceData(b) || uintptr(unsafe.Pointer(unsafe.SliceData(a)))%8 != 0 {
		t.Fatalf("the index is copied or misaligned: %p, %p", unsafe.SliceData(a), unsafe.SliceData(b))
	}
	m, err := ReadManifest(Embedded())
	if err != nil {
		t.Fatal(err)
	}
	if v, err := Version(Embedded()); err != nil || v != version || m.Index.Bundle != version {
		t.Fatalf("the index names bundle %q; the bundle is %q (%v)", version, v, err)
	}
}
