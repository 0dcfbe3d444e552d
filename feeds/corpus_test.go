package feeds_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/feeds"
	"github.com/rappel-ca/rappel/feeds/feedstest"
	"github.com/rappel-ca/rappel/plugins/plugintest"
)

// corpusRefresher returns a refresher of the three sources of the
// samples served by up, every URL carrying a key in its query string.
func corpusRefresher(up string) *feeds.Refresher {
	const key = "?key=secret"
	r := feeds.NewRefresher(nil, nil,
		feeds.HCDump(up+"/hc/recalls-en.json"+key, up+"/hc/recalls-fr.json"+key),
		feeds.VRDB(up+"/tc/vrdb.csv"+key),
		feeds.Detail(up+"/detail/{lang}/{id}.json"+key))
	r.Fetcher.Retries, r.Fetcher.BackoffMin, r.Fetcher.BackoffMax = 1, time.Millisecond, 10*time.Millisecond
	r.DetailRate = 0
	r.Logger = slog.New(slog.DiscardHandler)
	r.Fetcher.Logger = r.Logger
	return r
}

// fetchedCorpus returns the corpus in dir by source, as BundleRaw reads it.
func fetchedCorpus(dir string) map[string]fs.FS {
	corpus := map[string]fs.FS{}
	for source, sub := range sampleDirs {
		corpus[source] = os.DirFS(filepath.Join(dir, sub))
	}
	return corpus
}

// TestFetchCorpus fetches the samples served upstream into a corpus and
// checks that it is the samples' corpus: the same raw records as
// BundleRaw cuts from testdata/ (so that a node's first refresh against
// the same upstream finds nothing changed), a manifest naming every
// document by its address without its query string and its SHA-256, and
// every notice's detail documents fetched. With no budget for detail
// documents, every notice is left pending and gets no detail record.
func TestFetchCorpus(t *testing.T) {
	ctx := context.Background()
	root := plugintest.ModuleRoot(t)
	up := feedstest.NewUpstream(t)
	for _, sub := range sampleDirs {
		up.LoadDir(t, "/"+sub, filepath.Join(root, "testdata", sub))
	}
	dir := filepath.Join(t.TempDir(), "corpus")
	m, err := corpusRefresher(up.URL).FetchCorpus(ctx, dir, sampleDirs)
	if err != nil {
		t.Fatal(err)
	}
	want, err := feeds.BundleRaw(sampleCorpus(t))
	if err != nil {
		t.Fatal(err)
	}
	got, err := feeds.BundleRaw(fetchedCorpus(dir))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the fetched corpus's raw records differ from the samples':\n got %v\nwant %v", got, want)
	}

	p := m.Provenance
	if p.Kind != rappel.DatasetAgencies || len(p.Fetched) != 3 {
		t.Fatalf("provenance %+v, want agencies and the three documents fetched whole", p)
	}
	for _, d := range p.Fetched {
		body, err := os.ReadFile(filepath.Join(root, "testdata", sampleDirs[d.Source], d.Name))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(body)
		if strings.Contains(d.URL, "?") || strings.Contains(d.URL, "secret") || !strings.HasPrefix(d.URL, up.URL+"/") ||
			d.SHA256 != hex.EncodeToString(sum[:]) || d.Bytes != int64(len(body)) || d.At.IsZero() {
			t.Errorf("fetched %+v; want its address without the key, and the SHA-256 and size of its %d bytes", d, len(body))
		}
	}
	notices := 0
	for _, r := range want["detail"] {
		if r.Version != "" {
			notices++
		}
	}
	if p.Details != notices || p.DetailsLeft != 0 || notices == 0 {
		t.Errorf("details %d fetched, %d left; want the %d notices fetched", p.Details, p.DetailsLeft, notices)
	}
	if read, err := feeds.ReadCorpusManifest(dir); err != nil || read == nil || !read.FetchedAt.Equal(m.FetchedAt) || !reflect.DeepEqual(read.Provenance, m.Provenance) {
		t.Errorf("manifest read back: %+v, %v; want %+v", read, err, m)
	}

	t.Run("NoBudget", func(t *testing.T) {
		r := corpusRefresher(up.URL)
		r.DetailBudget = 0
		m, err := r.FetchCorpus(ctx, dir, sampleDirs) // replaces the corpus above
		if err != nil {
			t.Fatal(err)
		}
		if m.Provenance.Details != 0 || m.Provenance.DetailsLeft != notices {
			t.Errorf("details %d fetched, %d left; want all %d left", m.Provenance.Details, m.Provenance.DetailsLeft, notices)
		}
		// The detail plugin reads a corpus without en/ and fr/ as none of
		// its own; the earlier fetch's documents are gone.
		for _, lang := range rappel.Langs {
			if entries, err := os.ReadDir(filepath.Join(dir, "detail", lang)); err != nil || len(entries) != 0 {
				t.Errorf("detail/%s: %d entries, %v; want it empty", lang, len(entries), err)
			}
		}
		got, err := feeds.BundleRaw(fetchedCorpus(dir))
		if err != nil {
			t.Fatal(err)
		}
		if len(got["detail"]) != 0 || !reflect.DeepEqual(got["hcdump"], want["hcdump"]) {
			t.Errorf("%d detail records, want none: every notice is pending", len(got["detail"]))
		}
	})

	t.Run("RefusesOtherDirs", func(t *testing.T) {
		other := t.TempDir()
		if err := os.WriteFile(filepath.Join(other, "manifest.json"), []byte(`{"seed": 1, "reference_date": "2026-11-25"}`), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := corpusRefresher(up.URL).FetchCorpus(ctx, other, sampleDirs)
		if err == nil || !strings.Contains(err.Error(), "choose another directory") {
			t.Errorf("fetching into a generated corpus: %v, want a refusal", err)
		}
		if _, err := os.Stat(filepath.Join(other, "manifest.json")); err != nil {
			t.Errorf("the generated corpus was touched: %v", err)
		}
	})
}
