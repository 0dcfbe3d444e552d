package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/bundle"
	"github.com/rappel-ca/rappel/bundle/synth"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/plugins/shipped"
)

// ScaleResult is rappel on one size of the synthetic data set: its
// starts, its memory, and one round of every class.
type ScaleResult struct {
	Scale   float64
	Records int
	// Skipped says why this size was not measured, when it was not.
	Skipped string
	// Prepare is generating, normalizing and loading the data set, when
	// this run did it; Reused says an earlier run's data set and store
	// were used.
	Prepare time.Duration
	Reused  bool
	ScaleBuild
	// BuildThisRun says the build was measured by this run, not kept from
	// an earlier one.
	BuildThisRun bool
	// Starts are the warm starts, exec to first 200 of GET /recall on the
	// data dir the build left; Mem the memory after the last and the
	// mixed load.
	Starts   []Start
	Mem      NodeMem
	RPS      map[string]float64
	P50, P99 map[string]time.Duration
	Rate     map[string]float64
	Errors   map[string]int // failed requests of each class's runs
	// Profiles are perf's, during a second constant-rate run of each
	// class that missed its p99 goal at a size of the million-record
	// goals; ProfileNotes say why one could not be taken.
	Profiles     []Profile `json:",omitempty"`
	ProfileNotes []string  `json:",omitempty"`
	// StartProfile is perf's flat report of one more warm start at this
	// size, made before the timed ones (warmStartProfile).
	StartProfile []string `json:",omitempty"`
}

// ScaleBuild is the one-time first start on the loaded store, which holds
// records but no index segments: Build is exec to first 200 of GET
// /recall, the read index built from the store and written as a segment;
// BuildMem is that node's memory once idle (Peak its highest);
// BuildPeakAnonKB the highest private resident set (RssAnon) sampled while
// it built, which the memory goal is judged on: VmHWM counts the pages of
// the segment the build writes and maps, which are the page cache's to
// drop, not memory the build holds; BuildLimitMiB the GOMEMLIMIT it ran
// with; IndexBytes and StoreBytes are the segment files and the store on
// disk after it; BuildWhen and BuildCommit say which run measured it.
type ScaleBuild struct {
	Build                  time.Duration
	BuildMem               Mem
	BuildPeakAnonKB        int64
	BuildLimitMiB          int64
	IndexBytes, StoreBytes int64
	BuildWhen              time.Time
	BuildCommit            string
	// BuildProfile is perf's flat profile of the node from exec to its
	// first 200 (the build's CPU, by symbol); empty without perf.
	BuildProfile []string `json:",omitempty"`
}

// buildPrivateKB is the memory the one-time build is judged on: its
// highest private resident set, or, for a build an older run recorded
// before that was sampled, its VmHWM, which is never less.
func (s *ScaleResult) buildPrivateKB() int64 {
	if s.BuildPeakAnonKB > 0 {
		return s.BuildPeakAnonKB
	}
	return s.BuildMem.PeakKB
}

// scaleCurve measures rappel on each size of -scales but 1 (the main run's
// figures are that size).
func (h *Harness) scaleCurve(ctx context.Context, bin string, res *Results) {
	h.removeStaleScales()
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
		if ctx.Err() != nil {
			return
		}
	}
}

// scaleDir is where a size's data set, store and data dir are kept: named
// by size and scaleKey, so that a later run reuses a data set only if it
// would generate the same.
func (h *Harness) scaleDir(scale float64) string {
	return filepath.Join(h.WorkDir, "scale-"+strconv.FormatFloat(scale, 'f', 2, 64)+"-"+h.scaleKey())
}

// scaleSources are the packages whose code makes a data set: the
// generator and the normalizers, compiled into this harness.
var scaleSources = []string{"bundle/synth", "plugins/shipped", "plugins/hcdump", "plugins/vrdb", "plugins/detail"}

// scaleKey is what the generated data sets depend on beside their size:
// the reference date, and the code of scaleSources (their Go files in the
// repository), not the plugins' Wasm digests, which change with every
// build of the modules.
func (h *Harness) scaleKey() string {
	sum := sha256.New()
	for _, dir := range scaleSources {
		files, _ := filepath.Glob(filepath.Join(h.Repo, dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, _ := os.ReadFile(f)
			fmt.Fprintf(sum, "%s %d\n", filepath.ToSlash(filepath.Join(dir, filepath.Base(f))), len(b))
			sum.Write(b)
		}
	}
	return fmt.Sprintf("%s-%x", embeddedManifest().ReferenceDate, sum.Sum(nil)[:4])
}

// removeStaleScales removes the scale-* dirs of the work dir that another
// reference date or other plugins made: they hold gigabytes no run would
// use again.
func (h *Harness) removeStaleScales() {
	dirs, _ := filepath.Glob(filepath.Join(h.WorkDir, "scale-*"))
	for _, d := range dirs {
		if !strings.HasSuffix(d, "-"+h.scaleKey()) {
			h.logf("removing the stale data set %s", filepath.Base(d))
			os.RemoveAll(d)
		}
	}
}

func (h *Harness) scaleOne(ctx context.Context, bin string, scale float64, res *Results) (*ScaleResult, error) {
	sr := &ScaleResult{Scale: scale, Records: int(math.Round(float64(res.Records) * scale)), RPS: map[string]float64{},
		P50: map[string]time.Duration{}, P99: map[string]time.Duration{}, Rate: map[string]float64{}, Errors: map[string]int{}}
	dir := h.scaleDir(scale)
	bdir, storeDir, dataDir := filepath.Join(dir, "bundle"), filepath.Join(dir, "store"), filepath.Join(dir, "data")
	start := time.Now()
	_, err := os.Stat(storeDir + ".ready")
	sr.Reused = err == nil
	if err := h.makeBundle(ctx, scale, dir, bdir); err != nil {
		return sr, err
	}
	m, err := bundle.ReadManifest(os.DirFS(bdir))
	if err != nil {
		return sr, err
	}
	sr.Records = m.Records
	if err := h.prefill(ctx, os.DirFS(bdir), storeDir, m); err != nil {
		return sr, err
	}
	if !sr.Reused {
		sr.Prepare = time.Since(start).Round(100 * time.Millisecond)
	}
	samples, err := scaleSamples(os.DirFS(bdir), dir, m.Records)
	if err != nil {
		return sr, err
	}
	var classes []Class
	for _, c := range Classes(samples) {
		if c.Quick || !h.Quick {
			classes = append(classes, c)
		}
	}
	if err := h.firstStart(ctx, bin, storeDir, dataDir, sr); err != nil {
		return sr, err
	}
	sr.StartProfile = h.warmStartProfile(ctx, bin, dataDir)
	took, p, err := h.starts(ctx, bin, dataDir, false, h.Startups)
	if err != nil {
		return sr, err
	}
	sr.Starts = took
	s := &system{Name: "rappel", Base: "http://" + p.Addr, procs: []*proc{p}}
	defer s.stop()
	if _, err := h.resolve(ctx, s, classes); err != nil {
		return sr, err
	}
	if sr.Mem, err = h.mixedLoad(ctx, s, classes); err != nil {
		return sr, err
	}
	client := loadClient()
	for _, c := range classes {
		url := s.Base + s.URI[c.Name]
		w, err := runWrk(ctx, h.LoadCPU, url, keyHeader(), h.Conns, h.WrkDur)
		if err != nil {
			return sr, err
		}
		rate := min(h.MaxRate, max(1, float64(int(w.RPS/2))))
		for _, cr := range res.Classes {
			if cr.Class.Name == c.Name && cr.Rate > 0 {
				rate = cr.Rate // the main run's rate, so sizes compare at one load
			}
		}
		h.settle(ctx, s) // the wrk run's backlog worked off first
		l, err := runConstantRate(ctx, client, url, keyHeader(), rate, h.LatDur)
		if err != nil {
			return sr, err
		}
		sr.RPS[c.Name], sr.P50[c.Name], sr.P99[c.Name], sr.Rate[c.Name] = w.RPS, l.P50, l.P99, rate
		sr.Errors[c.Name] = w.Errors + l.Errors
		h.logf("  %-16s %.0f/s p99 %s", c.Name, w.RPS, l.P99.Round(time.Microsecond))
	}
	if isLarge(sr.Records) {
		h.profileLargeMisses(ctx, s, sr, classes)
	}
	return sr, nil
}

// firstStart gives the size a data dir whose index is built. The first
// start on a copy of the loaded store, which holds records and no index
// segments, builds the index: that start is measured (buildIndex) and its
// figures kept beside the data dir. Building takes minutes at a million
// records, so a later run starts on the data dir it left and reports the
// figures kept, unless -rebuild is given or that start rebuilt the index
// (a binary whose segments differ): then the figures are this run's.
func (h *Harness) firstStart(ctx context.Context, bin, storeDir, dataDir string, sr *ScaleResult) error {
	record := dataDir + ".build.json"
	var kept ScaleBuild
	b, err := os.ReadFile(record)
	reuse := !h.Rebuild && err == nil && json.Unmarshal(b, &kept) == nil && kept.Build > 0
	if _, err := os.Stat(filepath.Join(dataDir, "index")); err != nil {
		reuse = false
	}
	if !reuse {
		os.Remove(record)
		if err := os.RemoveAll(dataDir); err != nil {
			return err
		}
		if err := cloneDir(storeDir, dataDir); err != nil {
			return fmt.Errorf("copying the loaded store: %w", err)
		}
	}
	before := dirListing(filepath.Join(dataDir, "index"))
	if err := h.buildIndex(ctx, bin, dataDir, sr); err != nil {
		return err
	}
	if reuse && dirListing(filepath.Join(dataDir, "index")) == before {
		h.logf("  the index segments of an earlier run were opened as they were; reporting the build that run measured")
		sr.ScaleBuild = kept
		return nil
	}
	sr.BuildWhen, sr.BuildCommit = time.Now().UTC(), h.commit
	if b, err := json.Marshal(sr.ScaleBuild); err == nil {
		os.WriteFile(record, b, 0o644)
	}
	sr.BuildThisRun = true
	return nil
}

// dirListing names the files of dir with their sizes and times, to tell
// whether a start rewrote them.
func dirListing(dir string) string {
	entries, _ := os.ReadDir(dir)
	var b strings.Builder
	for _, e := range entries {
		if info, err := e.Info(); err == nil {
			fmt.Fprintf(&b, "%s %d %d\n", e.Name(), info.Size(), info.ModTime().UnixNano())
		}
	}
	return b.String()
}

// buildIndex is the one-time first start on a store that holds records
// but no index segments: rappel builds its read index from the store and
// writes it as a segment before it answers. Building holds every record
// and the index under construction in the heap, several gigabytes at a
// million records, so the node runs with a soft memory limit of three
// quarters of the memory available (GOMEMLIMIT: the collector works
// harder near it rather than let the heap double), and is stopped, the
// size reported as not measured, if the machine's available memory falls
// below memFloorKB while it builds.
func (h *Harness) buildIndex(ctx context.Context, bin, dataDir string, sr *ScaleResult) error {
	sr.BuildLimitMiB = memAvailableKB() * 3 / 4 >> 10
	h.logf("  first start on the data dir (GOMEMLIMIT=%dMiB)", sr.BuildLimitMiB)
	// MemAvailable when the watch stopped the build; the highest resident
	// set and private resident set seen
	var low, peak, peakAnon atomic.Int64
	done := make(chan struct{})
	defer close(done)
	// perf follows the node from its first moments to its first 200, so
	// that a missed build goal comes with where the build's CPU went.
	perfc := make(chan *perfRecording, 1)
	watch := func(p *proc) {
		perfc <- h.startPerf(p.PID(), "perf-scale-build.data", "499")
		for {
			m := readMem(p.PID())
			if m.RSSKB > peak.Load() {
				peak.Store(m.RSSKB)
			}
			if m.AnonKB > peakAnon.Load() {
				peakAnon.Store(m.AnonKB)
			}
			if avail := memAvailableKB(); avail > 0 && avail < memFloorKB() {
				low.Store(avail)
				p.cmd.Process.Kill()
				return
			}
			select {
			case <-done:
				return
			case <-p.exited():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	// On every core, as a node builds it when it starts: the build is not
	// a server measured against others, and indexes its two languages
	// side by side. The harness itself is pinned to one core, which the
	// node would inherit without its own taskset.
	all := "0-" + strconv.Itoa(runtime.NumCPU()-1)
	p, took, err := h.startRappelOn(ctx, all, runtime.NumCPU(), bin, dataDir, []string{fmt.Sprintf("GOMEMLIMIT=%dMiB", sr.BuildLimitMiB)}, time.Hour, watch)
	if err == nil {
		select {
		case bp := <-perfc:
			sr.BuildProfile = bp.stop(ctx)
		default:
		}
		err = p.waitIdle(ctx, idleTimeout)
		sr.BuildMem = readMem(p.PID())
		sr.BuildPeakAnonKB = max(peakAnon.Load(), sr.BuildMem.AnonKB)
		p.Stop()
	}
	if avail := low.Load(); avail > 0 {
		return fmt.Errorf("the one-time index build was stopped when the machine's available memory fell to %d MiB, its resident set then %d MiB (GOMEMLIMIT %d MiB)",
			avail>>10, peak.Load()>>10, sr.BuildLimitMiB)
	}
	if err != nil {
		return fmt.Errorf("the one-time index build: %w", err)
	}
	sr.Build = took.Took
	sr.IndexBytes = dirBytes(filepath.Join(dataDir, "index"))
	sr.StoreBytes = dirBytes(filepath.Join(dataDir, "pebble"))
	h.logf("  first 200 after %s, peak resident %d MiB (private %d MiB), segments %d MiB", took.Took.Round(time.Millisecond), sr.BuildMem.PeakKB>>10, sr.BuildPeakAnonKB>>10, sr.IndexBytes>>20)
	return nil
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
	var parts [][]*rappel.Record
	m := bundle.Manifest{BuiltAt: em.BuiltAt, ReferenceDate: em.ReferenceDate}
	for _, source := range rappel.SourcePrecedence {
		src, ok := shipped.Sources[source]
		if !ok {
			return fmt.Errorf("normalizing the %.2f× corpus: no normalizer for source %q", scale, source)
		}
		h.logf("  normalizing %s", source)
		var recs []*rappel.Record
		var problems []rappel.Problem
		err := src.Normalize(os.DirFS(filepath.Join(corpus, src.CorpusDir)),
			func(r *rappel.Record) error {
				recs = append(recs, r)
				if len(recs)%16384 == 0 {
					return enoughMemory("normalizing the corpus")
				}
				return nil
			},
			func(p rappel.Problem) { p.Source = source; problems = append(problems, p) })
		if err != nil {
			return fmt.Errorf("normalizing the %.2f× corpus (%s): %w", scale, source, err)
		}
		m.AddProblems(problems)
		parts = append(parts, recs)
	}
	recs, problems := rappel.Assemble(em.BuiltAt, parts...)
	parts = nil
	m.AddProblems(problems)
	if err := bundle.Write(bdir, recs, m); err != nil {
		return err
	}
	// Gigabytes at a million records, garbage now: the nodes measured next
	// need the memory.
	recs = nil
	debug.FreeOSMemory()
	// The corpus is gigabytes in a million files at a million records,
	// which take minutes to remove: the bundle is what is kept, and the
	// corpus goes while the run goes on.
	h.cleanup.Add(1)
	go func() {
		defer h.cleanup.Done()
		os.RemoveAll(corpus)
	}()
	return nil
}

// memFloorKB is the available memory (MemAvailable) below which the
// harness stops what it is building, rather than let the kernel's
// out-of-memory killer pick a process of the machine: 1 GiB, or a
// twentieth of the machine's memory if more.
func memFloorKB() int64 { return max(1<<20, memTotalKB()/20) }

// enoughMemory fails when the machine's available memory is below
// memFloorKB, saying what was stopped.
func enoughMemory(what string) error {
	if avail := memAvailableKB(); avail > 0 && avail < memFloorKB() {
		return fmt.Errorf("%s was stopped when the machine's available memory fell to %d MiB", what, avail>>10)
	}
	return nil
}

// prefill loads the bundle in fsys into a new store at storeDir, in
// chunks (the embedded bundle's one-batch load would hold a million
// records in one batch), where `rappel serve` opens a data dir's store,
// so that rappel starts on a copy of it as on any filled data dir. Its
// dataset info names the live feeds as the source, not a bundle: a data
// dir a node filled from elsewhere, which a node keeps whatever its
// binary's bundle (one that named the bundle would be replaced by the
// embedded 41,000 records when their build times differ).
func (h *Harness) prefill(ctx context.Context, fsys fs.FS, storeDir string, m bundle.Manifest) error {
	if _, err := os.Stat(storeDir + ".ready"); err == nil {
		return nil
	}
	h.logf("  loading %d records into a store", m.Records)
	os.RemoveAll(storeDir)
	st := kv.NewStore(filepath.Join(storeDir, "pebble"))
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
		err = st.SetDatasetInfo(ctx, rappel.DatasetInfo{UpdatedAt: m.BuiltAt, Source: "feeds", Records: m.Records})
	}
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("loading the scaled data set: %w", err)
	}
	return os.WriteFile(storeDir+".ready", nil, 0o644)
}

// scaleSamples is streamSamples of the bundle in fsys, kept in dir once
// picked: reading a million records takes a while.
func scaleSamples(fsys fs.FS, dir string, n int) (Samples, error) {
	file := filepath.Join(dir, "samples.json")
	var s Samples
	if b, err := os.ReadFile(file); err == nil && json.Unmarshal(b, &s) == nil && s.RecordID != "" {
		return s, nil
	}
	s, err := streamSamples(fsys, n)
	if err != nil {
		return s, err
	}
	b, err := json.Marshal(s)
	if err == nil {
		err = os.WriteFile(file, b, 0o644)
	}
	return s, err
}

// cloneDir copies the tree src to dst, linking Pebble's tables (files it
// never changes) rather than copying them: a million records' store in
// seconds, and src left as it was.
func cloneDir(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case strings.HasSuffix(path, ".sst"):
			return os.Link(path, to)
		}
		return copyFile(path, to)
	})
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// dirBytes is the size of the files under dir.
func dirBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
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
