package bundle

import (
	"bytes"
	"errors"
	"io/fs"
	"log/slog"
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
	// Products with parsed codes: the file leaves out a codes_text that
	// repeats the lot codes and gives it back, and keeps one that does not.
	amy := rappel.ParseLabelledCodes([]rappel.LabelledCode{{Text: "Best Before 04/2027"}, {Text: "Lot 60D0924"}})
	other := rappel.ParseApplicability("Lot 1")
	recs[0].ProductList = []rappel.Product{
		{Name: "Amy's Lentil Soup", LotCodes: []string{"Best Before 04/2027", "Lot 60D0924"}, Applicability: &amy},
		{Name: "Other", LotCodes: []string{"Lot 2"}, Applicability: &other},
		{Name: "No codes"},
	}
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
		if amy.Text != "Best Before 04/2027; Lot 60D0924" {
			t.Fatalf("the written record was changed: codes_text %q", amy.Text)
		}
		var lines int
		if err := readLines(os.DirFS(dir), recordsFile, "records", func(line []byte) error {
			if lines++; lines == 1 && (bytes.Contains(line, []byte(`"codes_text":"Best Before`)) || !bytes.Contains(line, []byte(`"codes_text":"Lot 1"`))) {
				t.Errorf("the records file carries %s", line)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
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

// embeddedBudget is the most the embedded bundle may weigh. It was 50 MiB,
// for the binary to stay under its 100 MB goal; the products' parsed codes
// (applicability, in each of the bundle's copies of a record's JSON, and in
// the detail source's partial records, which now carry what the columns'
// labels say) took it past that. The records file sheds the codes_text
// that repeats lot_codes and is compressed at the encoder's best, which
// brought it back to 50.4 MiB (BENCHMARKS.md); this bound keeps it there.
const embeddedBudget = 50<<20 + 512<<10

// TestEmbedded_Lean checks that the embedded bundle carries each byte
// once, packed where a node does not read it in place: its read index
// and sstables packed only, the whole under embeddedBudget, and that a
// node's copy of the index, unpacked into its data dir and mapped from
// there, is the index, aligned for its columns to be read in place.
func TestEmbedded_Lean(t *testing.T) {
	src := Embedded()
	m, err := ReadManifest(src)
	if err != nil || m.Index == nil {
		if os.Getenv("RAPPEL_TEST_BUNDLE") != "" {
			t.Fatalf("the embedded bundle has no read index (%v)", err)
		}
		t.Skip("no bundle with a read index is embedded; run `make bundle`")
	}
	var total int64
	if err := fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		total += fi.Size()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if total > embeddedBudget {
		t.Errorf("the embedded bundle weighs %d MiB, over its budget of %d MiB", total>>20, embeddedBudget>>20)
	}
	for _, tb := range append(m.Tables, m.Index.Table) {
		if tb.Packed == "" {
			t.Errorf("%s is not packed", tb.Name)
		}
		if _, err := fs.Stat(src, tb.Name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s is embedded unpacked as well as packed (%v)", tb.Name, err)
		}
	}
	want, version, err := IndexSegment()
	if err != nil {
		t.Fatal(err)
	}
	got, v, release, err := IndexDir{Dir: t.TempDir(), Log: slog.New(slog.DiscardHandler)}.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if !bytes.Equal(got, want) || v != version || uintptr(unsafe.Pointer(unsafe.SliceData(got)))%8 != 0 {
		t.Fatalf("the unpacked index: %d bytes at %p, version %q; want %d bytes, 8-aligned, version %q", len(got), unsafe.SliceData(got), v, len(want), version)
	}
	// The partial and raw records are left out of the binary, which the
	// version is a digest of: it is the bundle dir's, data/.
	for _, dir := range []string{"_partials", "_raw"} {
		if _, err := fs.Stat(src, dir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s is embedded (%v); the sstables hold it", dir, err)
		}
	}
	if v, err := Version(os.DirFS("data")); err != nil || v != version || m.Index.Bundle != version {
		t.Fatalf("the index names bundle %q; the bundle is %q (%v)", version, v, err)
	}
}
