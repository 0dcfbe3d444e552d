package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/bundle"
	"github.com/rappel-ca/rappel/bundle/synth"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/plugins/detail"
	"github.com/rappel-ca/rappel/plugins/hcdump"
	"github.com/rappel-ca/rappel/plugins/vrdb"
)

// ScaleResult is rappel on one size of the synthetic data set: one round
// of every class.
type ScaleResult struct {
	Scale   float64
	Records int
	// Skipped says why this size was not measured, when it was not.
	Skipped string
	// Prepare is generating, normalizing and loading the data set; Start
	// is exec to first 200 on the loaded store (the snapshot built).
	Prepare, Start time.Duration
	Reused         bool // the data set and store were an earlier run's
	MemKB          int64
	RPS            map[string]float64
	P50, P99       map[string]time.Duration
	Rate           map[string]float64
}

// scaleCurve measures rappel on each size of -scales but 1 (the main run's
// figures are that size).
func (h *Harness) scaleCurve(ctx context.Context, bin string, res *Results) {
	for _, s := range h.Scales {
		if s == 1 {
			continue
		}
		h.logf("scale %.2f×", s)
		sr, err := h.scaleOne(ctx, bin, s, res)
		if err != nil {
			sr.Skipped = err.Error()
			h.logf("scale %.2f× not measured: %v", s, err)
		}
		res.Scale = append(res.Scale, sr)
	}
}

func (h *Harness) scaleOne(ctx context.Context, bin string, scale float64, res *Results) (*ScaleResult, error) {
	sr := &ScaleResult{Scale: scale, Records: int(math.Round(float64(res.Records) * scale)), RPS: map[string]float64{},
		P50: map[string]time.Duration{}, P99: map[string]time.Duration{}, Rate: map[string]float64{}}
	if need, avail := memNeedKB(res, sr.Records), memAvailableKB(); need > avail {
		return sr, fmt.Errorf("it would need about %d MiB (extrapolated from the sizes measured before it, plus a fifth) but %d MiB are available",
			need>>10, avail>>10)
	}
	// Named by size and reference date, so that a later run reuses a data
	// set only if it was generated as this run would generate it.
	dir := filepath.Join(h.WorkDir, "scale-"+strconv.FormatFloat(scale, 'f', 2, 64)+"-"+embeddedManifest().ReferenceDate)
	bdir, dataDir := filepath.Join(dir, "bundle"), filepath.Join(dir, "data")
	start := time.Now()
	_, err := os.Stat(dataDir + ".ready")
	sr.Reused = err == nil
	if err := h.makeBundle(ctx, scale, dir, bdir); err != nil {
		return sr, err
	}
	m, err := bundle.ReadManifest(os.DirFS(bdir))
	if err != nil {
		return sr, err
	}
	sr.Records = m.Records
	if err := prefill(ctx, os.DirFS(bdir), dataDir, m); err != nil {
		return sr, err
	}
	sr.Prepare = time.Since(start).Round(100 * time.Millisecond)
	samples, err := streamSamples(os.DirFS(bdir), m.Records)
	if err != nil {
		return sr, err
	}
	var classes []Class
	for _, c := range Classes(samples) {
		if c.Quick || !h.Quick {
			classes = append(classes, c)
		}
	}
	probe := "/recall/" + samples.RecordID
	p, took, err := h.startRappel(ctx, bin, dataDir, probe)
	if err != nil {
		return sr, err
	}
	defer p.Stop()
	sr.Start = took
	s := &system{Name: "rappel", Base: "http://" + p.Addr, procs: []*proc{p}}
	if _, err := h.resolve(ctx, s, classes); err != nil {
		return sr, err
	}
	mem := &Results{MemKB: map[string]int64{}}
	client := loadClient()
	for _, c := range classes {
		url := s.Base + s.URI[c.Name]
		stop := sampleMem(s, mem)
		w, err := runWrk(ctx, h.LoadCPU, url, keyHeader(), h.Conns, h.WrkDur)
		stop()
		if err != nil {
			return sr, err
		}
		rate := min(h.MaxRate, max(1, float64(int(w.RPS/2))))
		for _, cr := range res.Classes {
			if cr.Class.Name == c.Name && cr.Rate > 0 {
				rate = cr.Rate // the main run's rate, so sizes compare at one load
			}
		}
		l, err := runConstantRate(ctx, client, url, keyHeader(), rate, h.LatDur)
		if err != nil {
			return sr, err
		}
		sr.RPS[c.Name], sr.P50[c.Name], sr.P99[c.Name], sr.Rate[c.Name] = w.RPS, l.P50, l.P99, rate
	}
	sr.MemKB = mem.MemKB["rappel"]
	return sr, nil
}

// makeBundle generates the corpus at scale (package synth, the same seed
// and reference date as the embedded bundle), normalizes it with the
// shipped plugins' code compiled natively, assembles the records as
// `rappel bundle` does and writes them as a bundle into bdir, unless bdir
// holds one already. Natively, not through the Wasm host: the host caps a
// guest's memory at 1 GiB (and wasm32 at 4 GiB), and Health Canada's dump
// at 200,000 records already exceeds the cap; the records are the same,
// the code being the same.
func (h *Harness) makeBundle(ctx context.Context, scale float64, dir, bdir string) error {
	if _, err := os.Stat(filepath.Join(bdir, "manifest.json")); err == nil {
		return nil
	}
	em := embeddedManifest()
	ref, err := time.Parse(time.DateOnly, em.ReferenceDate)
	if err != nil {
		return fmt.Errorf("reading the embedded bundle's reference date: %w", err)
	}
	corpus := filepath.Join(dir, "corpus")
	h.logf("  generating the %.2f× corpus", scale)
	if _, err := synth.Generate(corpus, synth.Config{Seed: 1, ReferenceDate: ref, Scale: scale}); err != nil {
		return fmt.Errorf("generating the %.2f× corpus: %w", scale, err)
	}
	normalizers := map[string]func(fs.FS, func(*rappel.Record) error, func(rappel.Problem)) error{
		"hcdump": hcdump.Normalize, "vrdb": vrdb.Normalize, "detail": detail.Normalize,
	}
	dirs := map[string]string{"hcdump": "hc", "vrdb": "tc", "detail": "detail"}
	var parts [][]*rappel.Record
	m := bundle.Manifest{BuiltAt: em.BuiltAt, ReferenceDate: em.ReferenceDate}
	for _, source := range rappel.SourcePrecedence {
		norm, ok := normalizers[source]
		if !ok {
			return fmt.Errorf("normalizing the %.2f× corpus: no normalizer for source %q", scale, source)
		}
		h.logf("  normalizing %s", source)
		var recs []*rappel.Record
		var problems []rappel.Problem
		err := norm(os.DirFS(filepath.Join(corpus, dirs[source])),
			func(r *rappel.Record) error { recs = append(recs, r); return nil },
			func(p rappel.Problem) { p.Source = source; problems = append(problems, p) })
		if err != nil {
			return fmt.Errorf("normalizing the %.2f× corpus (%s): %w", scale, source, err)
		}
		m.AddProblems(problems)
		parts = append(parts, recs)
	}
	recs, problems := rappel.Assemble(em.BuiltAt, parts...)
	m.AddProblems(problems)
	if err := bundle.Write(bdir, recs, m); err != nil {
		return err
	}
	return os.RemoveAll(corpus) // gigabytes at a million records; the bundle is what is kept
}

// prefill loads the bundle in fsys into a new store at dataDir, in chunks
// (the embedded bundle's one-batch load would hold a million records in
// one batch), so that rappel starts on it as on any filled data dir.
func prefill(ctx context.Context, fsys fs.FS, dataDir string, m bundle.Manifest) error {
	if _, err := os.Stat(dataDir + ".ready"); err == nil {
		return nil
	}
	os.RemoveAll(dataDir)
	st := kv.NewStore(filepath.Join(dataDir, "pebble")) // where `rappel serve` opens it
	st.Logger = slog.New(slog.DiscardHandler)
	if err := st.Open(ctx); err != nil {
		return fmt.Errorf("opening store: %w", err)
	}
	var chunk []*rappel.Record
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		err := st.PutRecords(ctx, chunk)
		chunk = chunk[:0]
		return err
	}
	err := bundle.ReadRecords(fsys, func(r *rappel.Record) error {
		chunk = append(chunk, r)
		if len(chunk) == 20000 {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err == nil {
		err = st.SetDatasetInfo(ctx, rappel.DatasetInfo{UpdatedAt: m.BuiltAt, Source: "bundle", Records: m.Records})
	}
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("loading the scaled data set: %w", err)
	}
	return os.WriteFile(dataDir+".ready", nil, 0o644)
}

// streamSamples picks the samples pickSamples would from n records,
// without holding them.
func streamSamples(fsys fs.FS, n int) (Samples, error) {
	var s Samples
	i := 0
	errDone := errors.New("done")
	err := bundle.ReadRecords(fsys, func(r *rappel.Record) error {
		if i == n/2 {
			s.RecordID = r.RecordID
		}
		if s.UPC == "" {
			s.UPC = pickSamples([]*rappel.Record{r}).UPC
		}
		i++
		if s.RecordID != "" && s.UPC != "" {
			return errDone
		}
		return nil
	})
	if err != nil && !errors.Is(err, errDone) {
		return s, err
	}
	return s, nil
}

// memNeedKB extrapolates rappel's memory under load at records: linearly
// through the two largest sizes measured so far (the main run's and the
// scale curve's), or in proportion to the main run's alone, plus a fifth
// for the collector's headroom.
func memNeedKB(res *Results, records int) int64 {
	type point struct {
		n  float64
		kb float64
	}
	pts := []point{{float64(res.Records), float64(res.WarmMemKB)}}
	for _, s := range res.Scale {
		if s.Skipped == "" && s.MemKB > 0 {
			pts = append(pts, point{float64(s.Records), float64(s.MemKB)})
		}
	}
	slices.SortFunc(pts, func(a, b point) int { return cmp.Compare(a.n, b.n) })
	hi := pts[len(pts)-1]
	if hi.kb <= 0 || hi.n <= 0 {
		return 0
	}
	need := hi.kb * float64(records) / hi.n
	if len(pts) > 1 {
		lo := pts[len(pts)-2]
		if slope := (hi.kb - lo.kb) / (hi.n - lo.n); slope > 0 && hi.n > lo.n {
			need = hi.kb + slope*(float64(records)-hi.n)
		}
	}
	return int64(need * 1.2)
}
