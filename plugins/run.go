package plugins

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/jsonx"
)

// Result is what one run of a plugin produced.
type Result struct {
	Records  []*rappel.Record
	Problems []rappel.Problem
	// Refusals are the record lines the host could not decode; they are in
	// Problems too.
	Refusals []rappel.Problem
	// Lines is the number of record lines the guest wrote, accepted or not,
	// and OutputBytes the bytes of its stdout.
	Lines       int
	OutputBytes int64
	Duration    time.Duration
}

// Run normalizes input, the source's raw files, which the guest sees
// read-only under /in. It returns an error when the run as a whole failed:
// the guest trapped, exited non-zero, ran past the host's Timeout or ctx,
// wrote more than MaxOutput, or (in a child process) used more memory than
// allowed. Record lines that are not valid records are reported as
// problems, not returned. The Result is returned with the error too, with
// the problems the guest reported.
func (p *Plugin) Run(ctx context.Context, input fs.FS) (res *Result, err error) {
	ctx, span := tracer.Start(ctx, "plugins.Run", trace.WithAttributes(
		attribute.String("rappel.plugin.name", p.Name),
		attribute.String("rappel.plugin.version", p.SHA256),
		attribute.Bool("rappel.plugin.child_process", p.compiled == nil && p.native == nil),
	))
	defer func() { endRun(span, res, err) }()
	return p.run(ctx, input)
}

// run is Run without its span.
func (p *Plugin) run(ctx context.Context, input fs.FS) (*Result, error) {
	h := p.host
	if h.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, h.Timeout)
		defer cancel()
	}
	records := &recordReader{plugin: p}
	log := &logReader{plugin: p, log: &guestLog{plugin: p}}
	stdout := &capped{max: h.MaxOutput, maxLine: maxRecordLineBytes, line: records.line}
	stderr := &capped{max: h.MaxOutput, maxLine: maxLogReadBytes, line: log.line}
	start := time.Now()
	var end guestEnd
	switch {
	case p.native != nil:
		end = p.runNative(input, stdout, stderr)
	case p.compiled == nil:
		end = p.runChild(ctx, input, stdout, stderr)
	default:
		end = p.instantiate(ctx, input, stdout, stderr)
	}
	stdout.flush()
	stderr.flush()
	log.log.close()
	res := &Result{Duration: time.Since(start), Problems: log.problems, OutputBytes: stdout.written}
	if err := p.runError(ctx, end, stdout, stderr, log.fatal, log.logLine); err != nil {
		return res, err
	}
	// The records are the run's only once it succeeded.
	res.Records, res.Refusals, res.Lines = records.records, records.refusals, records.lines
	res.Problems = append(res.Problems, records.problems...)
	return res, nil
}

// guestEnd is how a guest's run ended: err is nil, a *sys.ExitError, or
// another error; memoryPages is the size its linear memory had reached,
// which tells a guest that died at the memory limit from another crash.
type guestEnd struct {
	err         error
	memoryPages uint32
	// limitBytes is the child process's memory cap, when err is
	// errChildMemory.
	limitBytes int64
}

// instantiate runs the guest to its end in this process.
func (p *Plugin) instantiate(ctx context.Context, input fs.FS, stdout, stderr io.Writer) guestEnd {
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithArgs(p.Name, ABIVersion).
		WithStdout(stdout).
		WithStderr(stderr).
		WithFSConfig(wazero.NewFSConfig().WithFSMount(input, "/in")).
		WithSysWalltime().
		WithSysNanotime().
		WithSysNanosleep()
	end := guestEnd{}
	var mod api.Module
	mod, end.err = p.host.runtime.InstantiateModule(experimental.WithMemoryAllocator(ctx, experimental.MemoryAllocatorFunc(allocateMemory)), p.compiled, cfg)
	if mod != nil {
		if m := mod.Memory(); m != nil {
			end.memoryPages = m.Size() / 65536
		}
		_ = mod.Close(context.WithoutCancel(ctx))
	}
	return end
}

// runError turns how the guest ended into the run's error, if any. logLine
// is the guest's own log line most likely to say why it crashed.
func (p *Plugin) runError(ctx context.Context, end guestEnd, stdout, stderr *capped, fatal, logLine string) error {
	h, err := p.host, end.err
	switch {
	case stdout.over.Load() || stderr.over.Load():
		return fmt.Errorf("running plugin %s: output exceeded %d bytes (%s MiB, %s); the run was stopped, raise %s if the source needs more", p.Name, h.MaxOutput, mib(h.MaxOutput), h.Settings.Output, h.Settings.Output)
	case ctx.Err() != nil:
		return fmt.Errorf("running plugin %s: stopped after %s (%s): %w", p.Name, h.Timeout, h.Settings.Timeout, ctx.Err())
	case errors.Is(err, errChildMemory):
		return fmt.Errorf("running plugin %s: its process used more than %s MiB and was stopped; the guest may use %s MiB of memory (%s), and its process that much twice, twice the input and 512 MiB more", p.Name, mib(end.limitBytes), mib(h.memoryLimitBytes()), h.Settings.Memory)
	case err != nil && h.atMemoryLimit(end, logLine):
		return fmt.Errorf("running plugin %s: it ran out of memory at the limit of %s MiB (%s) and was stopped; raise %s if the source needs more", p.Name, mib(h.memoryLimitBytes()), h.Settings.Memory, h.Settings.Memory)
	case fatal != "":
		return fmt.Errorf("running plugin %s: %s", p.Name, fatal)
	case err == nil:
		return nil
	}
	why := ""
	if logLine != "" {
		why = fmt.Sprintf(" (it logged %q)", logLine)
	}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		if exit.ExitCode() == 0 {
			return nil
		}
		return fmt.Errorf("running plugin %s: exited with code %d%s", p.Name, exit.ExitCode(), why)
	}
	return fmt.Errorf("running plugin %s: %w%s", p.Name, err, why)
}

// atMemoryLimit reports whether a failed run failed for want of memory: its
// linear memory reached the last eighth below the limit, where a runtime's
// next grow fails, or the guest said it was out of memory.
func (h *Host) atMemoryLimit(end guestEnd, logLine string) bool {
	if h.MemoryLimitPages == 0 {
		return false
	}
	return uint64(end.memoryPages)*8 >= uint64(h.MemoryLimitPages)*7 || strings.Contains(logLine, "out of memory")
}

// memoryLimitBytes is the guest's linear memory limit in bytes.
func (h *Host) memoryLimitBytes() int64 { return int64(h.MemoryLimitPages) * 65536 }

// mib writes n bytes in MiB, with a decimal where it is not a whole number.
func mib(n int64) string { return strconv.FormatFloat(float64(n)/(1<<20), 'f', -1, 64) }

var recordIDPattern = regexp.MustCompile(`^[a-z0-9]+-[a-z0-9][a-z0-9._-]{0,63}$`)

// maxRecordLineBytes is the longest record line the host reads.
const maxRecordLineBytes = 16 << 20

// recordReader decodes a guest's stdout line by line as it is written, so
// that the host holds the records, not the output they came in. Each line
// is decoded strictly: unknown fields, a malformed record_id or trailing
// data make the line a problem.
type recordReader struct {
	plugin   *Plugin
	records  []*rappel.Record
	problems []rappel.Problem
	refusals []rappel.Problem
	lines    int
	// done is set once no more lines are read: past MaxRecords, or past a
	// line too long to read.
	done bool
}

func (r *recordReader) line(line []byte, long bool) {
	if r.done || len(bytes.TrimSpace(line)) == 0 && !long {
		return
	}
	p := r.plugin
	if long {
		r.done = true
		r.problems = append(r.problems, rappel.Problem{Source: p.Name, Reason: fmt.Sprintf("reading output after line %d: line %d is longer than %d MiB; the rest of the output was dropped", r.lines, r.lines+1, maxRecordLineBytes>>20)})
		return
	}
	r.lines++
	if p.host.MaxRecords > 0 && len(r.records) >= p.host.MaxRecords {
		r.done = true
		r.refuse(rappel.Problem{Source: p.Name, Reason: fmt.Sprintf("more than %d records; the rest were dropped", p.host.MaxRecords)})
		return
	}
	rec, err := decodeRecord(line)
	if err != nil {
		r.refuse(rappel.Problem{Source: p.Name, Reason: fmt.Sprintf("output line %d is not a record: %v", r.lines, err)})
		return
	}
	r.records = append(r.records, rec)
}

func (r *recordReader) refuse(p rappel.Problem) {
	r.problems = append(r.problems, p)
	r.refusals = append(r.refusals, p)
}

// decodeRecord decodes one line of a guest's output as encoding/json does
// (jsonx): invalid UTF-8 becomes U+FFFD, and a refused line gets
// encoding/json's wording.
func decodeRecord(line []byte) (*rappel.Record, error) {
	var r rappel.Record
	if err := jsonx.UnmarshalStrict(line, &r); err != nil {
		return nil, err
	}
	if !recordIDPattern.MatchString(r.RecordID) {
		return nil, fmt.Errorf("record_id %q is not <source>-<id> in lower-case URL-safe characters", r.RecordID)
	}
	return &r, nil
}

// maxLogReadBytes is the longest stderr line read whole: a problem line
// longer than it is read as the guest's log.
const maxLogReadBytes = 1 << 20

// logReader reads a guest's stderr line by line as it is written: problem
// lines, the guest's fatal sentence if it wrote one, and its own log, the
// lines that are not JSON. Of these the one that best explains a crash is
// kept: the first that starts like a Go runtime's last words, or else the
// last. The log is logged within Host.MaxLogLines (see guestLog).
type logReader struct {
	plugin         *Plugin
	log            *guestLog
	problems       []rappel.Problem
	fatal, logLine string
	crashed        bool
}

func (r *logReader) line(b []byte, long bool) {
	var line struct {
		rappel.Problem
		Fatal string `json:"fatal"`
	}
	if err := jsonx.Unmarshal(b, &line); long || err != nil || (line.Reason == "" && line.Fatal == "") {
		if t := bytes.TrimSpace(b); len(t) > 0 {
			cut := r.log.add(t)
			if !r.crashed {
				r.logLine = cut
				r.crashed = strings.HasPrefix(cut, "panic: ") || strings.HasPrefix(cut, "fatal error: ")
			}
		}
		return
	}
	if line.Fatal != "" {
		r.fatal = line.Fatal
		return
	}
	line.Problem.Source = r.plugin.Name
	r.problems = append(r.problems, line.Problem)
}

// maxLogLineBytes is where a guest's log line is cut in the server's log.
const maxLogLineBytes = 300

// guestLog logs a run's log lines, each cut at maxLogLineBytes, the first
// Host.MaxLogLines of them one by one and the rest as one line that counts
// them: a guest that writes its log in a loop must not fill the server's
// (plugins/ABI.md, "Limits").
type guestLog struct {
	plugin          *Plugin
	logged, dropped int
	droppedBytes    int64
}

// add logs line, or counts it once the run's share is spent, and returns
// it as cut.
func (g *guestLog) add(line []byte) string {
	cut := string(line[:min(len(line), maxLogLineBytes)])
	if max := g.plugin.host.MaxLogLines; max > 0 && g.logged >= max {
		g.dropped++
		g.droppedBytes += int64(len(line))
		return cut
	}
	g.logged++
	g.plugin.host.logger().Info("plugin log", "plugin", g.plugin.Name, "line", cut)
	return cut
}

// close logs the count of the lines add did not log.
func (g *guestLog) close() {
	if g.dropped > 0 {
		g.plugin.host.logger().Warn("plugin log lines not logged", "plugin", g.plugin.Name,
			"logged", g.logged, "not_logged", g.dropped, "not_logged_bytes", g.droppedBytes)
	}
}

// capped is an io.Writer that splits what it is given into lines for line,
// as it comes, and fails past max bytes, so that a guest that floods its
// output is stopped by its own write error. It keeps only the line being
// written, at most maxLine bytes of it: a longer line reaches line cut, with
// long set.
type capped struct {
	max     int64
	maxLine int
	line    func(b []byte, long bool)
	over    atomic.Bool
	// onOver, when set, is called once the cap is passed: a child process
	// is killed rather than left blocked on a full pipe.
	onOver func()

	written int64
	pending []byte
	long    bool
}

func (c *capped) Write(b []byte) (int, error) {
	if c.max > 0 && c.written+int64(len(b)) > c.max {
		if !c.over.Swap(true) && c.onOver != nil {
			c.onOver()
		}
		return 0, fmt.Errorf("plugin output exceeds %d bytes", c.max)
	}
	c.written += int64(len(b))
	n := len(b)
	for len(b) > 0 {
		end := bytes.IndexByte(b, '\n')
		part := b
		if end >= 0 {
			part = b[:end]
		}
		c.keep(part)
		if end < 0 {
			break
		}
		c.flush()
		b = b[end+1:]
	}
	return n, nil
}

// keep adds part to the pending line, up to maxLine bytes.
func (c *capped) keep(part []byte) {
	room := c.maxLine - len(c.pending)
	if len(part) > room {
		part, c.long = part[:max(room, 0)], true
	}
	c.pending = append(c.pending, part...)
}

// flush passes the pending line on: at each newline, and once the output
// has ended, for a last line without one.
func (c *capped) flush() {
	if len(c.pending) > 0 || c.long {
		c.line(c.pending, c.long)
	}
	c.pending, c.long = c.pending[:0], false
}
