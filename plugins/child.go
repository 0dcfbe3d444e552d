package plugins

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/tetratelabs/wazero/sys"
)

// A run in a child process: the parent starts Host.Command (by default
// this executable with ChildCommand as its argument, whose main calls
// RunChild), writes a childJob line, the module's bytes and the input as a
// tar stream to its stdin, and reads the guest's stdout and stderr from its
// stdout and stderr. The child writes one childStatus line to file
// descriptor 3 when the guest ends. The parent kills the child at the
// deadline, past the output cap, or past the memory cap; a child that ends
// without a status was killed or crashed.
//
// Nothing happens when the package is imported: a program serves runs only
// where its main calls RunChild, so no variable in the environment can turn
// a process that merely imports plugins into a child.

// ChildCommand is the argument the default Host.Command gives this
// executable: a program that runs plugins in children (rappel's hidden
// "rappel plugin-child") calls RunChild when it sees it.
const ChildCommand = "plugin-child"

// childEnv is the only variable of a child's environment: it marks the
// process as a Host's child (its value is the ABI version of the parent),
// so that a child that did not call RunChild and opens a host of its own
// fails at once instead of starting children in turn (see Host.Open).
const childEnv = "RAPPEL_PLUGIN_CHILD"

// childJob is the first line a child reads.
type childJob struct {
	ABI              string `json:"abi"`
	Name             string `json:"name"`
	CacheDir         string `json:"cache_dir"`
	MemoryLimitPages uint32 `json:"memory_limit_pages"`
	WasmSize         int    `json:"wasm_size"`
}

// childStatus is how the guest ended, as the child saw it.
type childStatus struct {
	// ExitCode is the guest's exit code; 0 when it returned from _start.
	ExitCode int `json:"exit_code"`
	// Error is a trap or a failure before the guest started.
	Error string `json:"error,omitempty"`
	// MemoryPages is the size the guest's linear memory reached.
	MemoryPages uint32 `json:"memory_pages,omitempty"`
}

// errChildMemory is returned when the child was killed for its memory.
var errChildMemory = errors.New("the plugin's process used more memory than allowed")

// runChild runs the plugin in a child process and returns how the guest
// ended.
func (p *Plugin) runChild(ctx context.Context, input fs.FS, stdout, stderr *capped) guestEnd {
	payload, err := CopyPayload(input)
	if err != nil {
		return guestEnd{err: err}
	}
	limit := p.host.childMemoryLimit(payload)
	st, err := p.runChildOn(ctx, payload, limit, stdout, stderr)
	end := guestEnd{err: err, memoryPages: st.MemoryPages}
	if errors.Is(err, errChildMemory) {
		end.limitBytes = limit
	}
	return end
}

// runChildOn starts the child, feeds it the run, and returns the status it
// reported and what the guest's end means for the run: nil, a
// *sys.ExitError, or another error.
func (p *Plugin) runChildOn(ctx context.Context, payload *Payload, limit int64, stdout, stderr *capped) (childStatus, error) {
	h := p.host
	var st childStatus
	job, err := json.Marshal(childJob{ABI: ABIVersion, Name: p.Name, CacheDir: h.CacheDir, MemoryLimitPages: h.MemoryLimitPages, WasmSize: len(p.wasm)})
	if err != nil {
		return st, err
	}
	tr, tw := io.Pipe()
	go func() { tw.CloseWithError(payload.writeTar(tw)) }()
	defer tr.Close() // unblocks the tar writer if the child stopped reading

	cmd := exec.CommandContext(ctx, h.childCmd[0], h.childCmd[1:]...)
	cmd.Env = []string{childEnv + "=" + ABIVersion}
	cmd.Stdin = io.MultiReader(bytes.NewReader(append(job, '\n')), bytes.NewReader(p.wasm), tr)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = time.Second
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return st, fmt.Errorf("creating status pipe: %w", err)
	}
	defer statusR.Close()
	cmd.ExtraFiles = []*os.File{statusW}
	kill := func() {
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
	}
	stdout.onOver, stderr.onOver = kill, kill
	err = cmd.Start()
	statusW.Close()
	if err != nil {
		return st, fmt.Errorf("starting plugin process %s: %w", h.childCmd[0], err)
	}
	var status []byte
	statusDone := make(chan struct{})
	go func() {
		status, _ = io.ReadAll(io.LimitReader(statusR, 64<<10))
		close(statusDone)
	}()
	stopWatch := make(chan struct{})
	overMemory := make(chan bool, 1)
	go watchMemory(cmd.Process.Pid, limit, stopWatch, overMemory, kill)
	werr := cmd.Wait()
	close(stopWatch)
	<-statusDone
	if <-overMemory {
		return st, errChildMemory
	}
	if err := json.Unmarshal(bytes.TrimSpace(status), &st); err != nil {
		if ctx.Err() != nil || stdout.over.Load() || stderr.over.Load() {
			return st, nil // runError reports these
		}
		return st, fmt.Errorf("the plugin's process ended without a status (%v)", werr)
	}
	switch {
	case st.Error != "":
		return st, errors.New(st.Error)
	case st.ExitCode != 0:
		return st, sys.NewExitError(uint32(st.ExitCode))
	}
	return st, nil
}

// childMemoryLimit is MaxChildMemory or its default for a run on payload.
func (h *Host) childMemoryLimit(payload *Payload) int64 {
	if h.MaxChildMemory > 0 {
		return h.MaxChildMemory
	}
	return 2*int64(h.MemoryLimitPages)*65536 + 2*payload.Size() + 512<<20
}

// watchMemory kills the process pid when its resident memory passes limit,
// and says on over whether it did. It polls /proc, so it watches only where
// there is one (Linux); elsewhere the guest's page limit is the only cap.
func watchMemory(pid int, limit int64, stop <-chan struct{}, over chan<- bool, kill func()) {
	path := "/proc/" + strconv.Itoa(pid) + "/statm"
	page := int64(os.Getpagesize())
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			over <- false
			return
		case <-t.C:
		}
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			continue
		}
		if rss, err := strconv.ParseInt(f[1], 10, 64); err == nil && rss*page > limit {
			kill()
			<-stop
			over <- true
			return
		}
	}
}

// RunChild serves one run as a Host's child on this process's stdin,
// stdout, stderr and file descriptor 3, and returns the process's exit
// code: 0 once the guest's end was reported. The main of a program started
// as Host.Command calls it and exits with its result. A job from a parent
// speaking another ABI version (another build) is refused: the status says
// so and the guest is not run.
func RunChild(ctx context.Context) int {
	return serveChildOn(ctx, os.Stdin, os.Stdout, os.Stderr, os.NewFile(3, "status"))
}

// serveChildOn reads the job, the module and the input from stdin, runs
// the guest with stdout and stderr as the guest's, and writes how the
// guest ended to status. The guest is compiled without deadline checks
// (the parent kills this process at the deadline) and with the parent's
// compilation cache, where the parent left it.
func serveChildOn(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, status io.Writer) int {
	st := serveChild(ctx, stdin, stdout, stderr)
	b, _ := json.Marshal(st)
	if _, err := status.Write(append(b, '\n')); err != nil {
		return 1
	}
	return 0
}

func serveChild(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) childStatus {
	br := bufio.NewReaderSize(stdin, 1<<20)
	line, err := br.ReadBytes('\n')
	if err != nil {
		return childStatus{Error: fmt.Sprintf("reading the job: %v", err)}
	}
	var job childJob
	if err := json.Unmarshal(line, &job); err != nil {
		return childStatus{Error: fmt.Sprintf("reading the job: %v", err)}
	}
	if job.ABI != ABIVersion {
		return childStatus{Error: fmt.Sprintf("the parent speaks plugin ABI %q but this child speaks %q", job.ABI, ABIVersion)}
	}
	wasm := make([]byte, job.WasmSize)
	if _, err := io.ReadFull(br, wasm); err != nil {
		return childStatus{Error: fmt.Sprintf("reading the module: %v", err)}
	}
	payload, err := readTarPayload(br)
	if err != nil {
		return childStatus{Error: err.Error()}
	}
	h := &Host{CacheDir: job.CacheDir, MemoryLimitPages: job.MemoryLimitPages, Interruptible: false}
	if err := h.Open(ctx); err != nil {
		return childStatus{Error: err.Error()}
	}
	defer h.Close(ctx)
	p, err := h.Load(ctx, job.Name, wasm)
	if err != nil {
		return childStatus{Error: err.Error()}
	}
	// Buffered, so that a guest writing line by line does not cost a
	// system call per line; flushed before the status says it ended.
	out := bufio.NewWriterSize(stdout, 256<<10)
	end := p.instantiate(ctx, payload, out, stderr)
	st := childStatus{MemoryPages: end.memoryPages}
	var exit *sys.ExitError
	switch ferr := out.Flush(); {
	case ferr != nil && end.err == nil:
		st.Error = fmt.Sprintf("writing the guest's output: %v", ferr)
	case end.err == nil:
	case errors.As(end.err, &exit):
		st.ExitCode = int(exit.ExitCode())
	default:
		st.Error = end.err.Error()
	}
	return st
}
