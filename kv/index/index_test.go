package index

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/rappel-ca/rappel"
)

func testRecord(id string) *rappel.Record {
	return &rappel.Record{
		RecordID: id, RecallID: "1", RecallType: rappel.TypeFood, Agency: rappel.AgencyCFIA,
		Status: rappel.StatusActive, EventDate: "2024-01-02", RecallDate: "2024-01-02",
		FetchedAt: "2024-01-03T00:00:00Z",
		Translations: rappel.Translations{
			EN: &rappel.Translation{Title: "Cheese recalled"},
			FR: &rappel.Translation{Title: "Fromage rappelé"},
		},
	}
}

func TestSnapshot_RecordJSON(t *testing.T) {
	s, err := Build([]*rappel.Record{testRecord("hc-1"), testRecord("hc-2")}, rappel.DatasetInfo{UpdatedAt: time.Unix(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 2 || s.Info().Records != 2 {
		t.Fatalf("Len = %d, Info.Records = %d", s.Len(), s.Info().Records)
	}
	t.Run("OK", func(t *testing.T) {
		for lang, want := range map[string][]string{"": {"en", "fr"}, "en": {"en"}, "fr": {"fr"}} {
			b, ok := s.RecordJSON("hc-2", lang)
			if !ok {
				t.Fatal("hc-2 not found")
			}
			var got struct {
				RecordID     string                     `json:"record_id"`
				Translations map[string]json.RawMessage `json:"translations"`
			}
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if got.RecordID != "hc-2" || len(got.Translations) != len(want) {
				t.Errorf("lang %q: got %s", lang, b)
			}
			for _, l := range want {
				if got.Translations[l] == nil {
					t.Errorf("lang %q: translations lack %s: %s", lang, l, b)
				}
			}
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		if _, ok := s.RecordJSON("hc-3", ""); ok {
			t.Fatal("found a record that does not exist")
		}
	})
	t.Run("Duplicate", func(t *testing.T) {
		if _, err := Build([]*rappel.Record{testRecord("hc-1"), testRecord("hc-1")}, rappel.DatasetInfo{}); err == nil {
			t.Fatal("duplicate record_id accepted")
		}
	})
}

func TestCatalog_Swap(t *testing.T) {
	var c Catalog
	if c.Snapshot().Len() != 0 {
		t.Fatal("zero Catalog is not empty")
	}
	s, _ := Build([]*rappel.Record{testRecord("hc-1")}, rappel.DatasetInfo{})
	old := c.Snapshot()
	c.Swap(s)
	if c.Snapshot().Len() != 1 || old.Len() != 0 {
		t.Fatal("swap did not replace the snapshot, or changed the old one")
	}
}

// TestSnapshot_AppendRecordJSON checks that appending gives RecordJSON's
// bytes after what dst held, and the digest the ETag is made of: the
// xxhash of exactly those bytes, asked for the first time and from the
// cache, and for a record served from a view's delta.
func TestSnapshot_AppendRecordJSON(t *testing.T) {
	base, err := Build([]*rappel.Record{testRecord("hc-1"), testRecord("hc-2")}, rappel.DatasetInfo{UpdatedAt: time.Unix(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	changed := testRecord("hc-2")
	changed.Translations.EN.Title = "Cheese recalled again"
	delta, err := Build([]*rappel.Record{changed}, rappel.DatasetInfo{})
	if err != nil {
		t.Fatal(err)
	}
	view := NewView(base, delta, nil, base.Info())
	for _, id := range []string{"hc-1", "hc-2"} {
		for _, lang := range []string{"", rappel.LangEN, rappel.LangFR} {
			want, _ := view.RecordJSON(id, lang)
			checkAppendRecordJSON(t, view, id, lang, want)
		}
	}
	if b, _, ok := view.AppendRecordJSON([]byte("kept"), "hc-3", ""); ok || string(b) != "kept" {
		t.Errorf("missing record: ok %v, dst %q; want false with dst as given", ok, b)
	}
}

// checkAppendRecordJSON checks v's AppendRecordJSON for id in lang against
// want, twice, so that the second digest comes from the cache.
func checkAppendRecordJSON(t *testing.T, v *View, id, lang string, want []byte) {
	t.Helper()
	for range 2 {
		b, digest, ok := v.AppendRecordJSON([]byte("prefix"), id, lang)
		if !ok || string(b) != "prefix"+string(want) {
			t.Fatalf("%s in %q: appended %q, want the prefix then %s", id, lang, b, want)
		}
		if sum := xxhash.Sum64(want); digest != sum {
			t.Fatalf("%s in %q: digest %x, want the xxhash of the bytes, %x", id, lang, digest, sum)
		}
	}
}
