package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The exports measurement of the abuse mode (-exports N): N clients
// export the whole dataset at once, each reading at -export-rate bytes a
// second, as clients on slow links do, from a node started with as many
// export slots. Each export must end with every record (as many lines as
// Rappel-Count says) and a clean end of body; the node's log must have no
// export cut.

// ExportRun is what the exports measurement saw.
type ExportRun struct {
	Clients int
	Rate    int64 // bytes a second each client reads at most
	Format  string
	// Complete counts the exports that ended with status 200, every
	// record and a clean end; Refused the 503s; Failed describes the rest.
	Complete, Refused int
	Failed            []string
	MinBytes          int64
	MaxBytes          int64
	P50, Max          time.Duration
	// Cuts counts the access log lines of the node that say an export
	// was cut.
	Cuts        int
	ServerCores float64
	RSSKB       int64 // before
	PeakKB      int64 // the largest resident set sampled during the run
}

// exportOutcome is one client's export.
type exportOutcome struct {
	status       int
	lines, bytes int64
	count        int64 // Rappel-Count
	took         time.Duration
	err          error
}

// runExports runs the measurement against the node at base, whose
// process is pid and whose log is logFile.
func runExports(ctx context.Context, base string, pid int, logFile string, clients int, rate int64, format string) ExportRun {
	run := ExportRun{Clients: clients, Rate: rate, Format: format, RSSKB: readMem(pid).RSSKB}
	logFrom := fileSize(logFile)
	peak := peakRSS(pid)
	start, ticks0 := time.Now(), cpuTicks(pid)
	outcomes := make([]exportOutcome, clients)
	var cwg sync.WaitGroup
	for i := range outcomes {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
			outcomes[i] = readExport(ctx, client, base+"/recall/export?format="+format, rate)
		}()
	}
	cwg.Wait()
	run.ServerCores = float64(cpuTicks(pid)-ticks0) / (time.Since(start).Seconds() * 100) // USER_HZ
	run.PeakKB = max(peak(), run.RSSKB)
	run.Cuts = countCuts(logFile, logFrom)

	var took []time.Duration
	run.MinBytes = -1
	for _, o := range outcomes {
		switch {
		case o.status == http.StatusServiceUnavailable:
			run.Refused++
			continue
		case o.status == http.StatusOK && o.err == nil && o.lines == o.count:
			run.Complete++
		default:
			run.Failed = append(run.Failed, fmt.Sprintf("status %d, %d of %d records, %d bytes, %v", o.status, o.lines, o.count, o.bytes, o.err))
		}
		took = append(took, o.took)
		run.MaxBytes = max(run.MaxBytes, o.bytes)
		if run.MinBytes < 0 || o.bytes < run.MinBytes {
			run.MinBytes = o.bytes
		}
	}
	slices.Sort(took)
	run.P50, run.Max = percentile(took, 0.5), percentile(took, 1)
	return run
}

// readExport sends GET url and reads the body at most rate bytes a
// second, counting its lines.
func readExport(ctx context.Context, client *http.Client, url string, rate int64) exportOutcome {
	start := time.Now()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header = keyHeader()
	resp, err := client.Do(req)
	if err != nil {
		return exportOutcome{err: err, took: time.Since(start)}
	}
	defer resp.Body.Close()
	o := exportOutcome{status: resp.StatusCode}
	o.count, _ = strconv.ParseInt(resp.Header.Get("Rappel-Count"), 10, 64)
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		o.took = time.Since(start)
		return o
	}
	buf := make([]byte, 64<<10)
	header := resp.Header.Get("Content-Type") != "application/x-ndjson" // CSV's first line
	for {
		n, err := resp.Body.Read(buf)
		o.bytes += int64(n)
		o.lines += int64(bytes.Count(buf[:n], []byte{'\n'}))
		if err != nil {
			if !errors.Is(err, io.EOF) {
				o.err = err
			}
			break
		}
		// The pace of a link of rate bytes a second: the bytes read so
		// far are due no sooner than this.
		if due := start.Add(time.Duration(o.bytes * int64(time.Second) / rate)); time.Until(due) > 0 {
			time.Sleep(time.Until(due))
		}
	}
	if header {
		o.lines--
	}
	o.took = time.Since(start)
	return o
}

// fileSize is the size of the file at path, 0 when it cannot be read.
func fileSize(path string) int64 {
	info, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return info.Size()
}

// countCuts counts the access log lines from offset on in the node's log
// that say a response was cut.
func countCuts(path string, offset int64) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	b, _ := io.ReadAll(io.NewSectionReader(f, offset, 1<<30))
	n := 0
	for line := range strings.Lines(string(b)) {
		if strings.Contains(line, "route=/recall/export") && strings.Contains(line, " cut=") {
			n++
		}
	}
	return n
}

// writeExports writes the run as Markdown.
func writeExports(w io.Writer, r ExportRun) {
	fmt.Fprintf(w, "| %d exports (%s) at once, each read at %.1f MiB/s | |\n|---|---|\n", r.Clients, r.Format, float64(r.Rate)/(1<<20))
	fmt.Fprintf(w, "| complete (200, every record, clean end) | %d of %d |\n", r.Complete, r.Clients)
	fmt.Fprintf(w, "| refused (503) | %d |\n", r.Refused)
	fmt.Fprintf(w, "| failed or cut short | %d |\n", len(r.Failed))
	fmt.Fprintf(w, "| cuts in the node's access log | %d |\n", r.Cuts)
	fmt.Fprintf(w, "| body size, min / max | %.1f / %.1f MiB |\n", float64(r.MinBytes)/(1<<20), float64(r.MaxBytes)/(1<<20))
	fmt.Fprintf(w, "| time to the end of the body, p50 / max | %s / %s |\n", r.P50.Round(100*time.Millisecond), r.Max.Round(100*time.Millisecond))
	fmt.Fprintf(w, "| server cores busy | %.2f |\n", r.ServerCores)
	fmt.Fprintf(w, "| server resident set before / peak | %d / %d MiB |\n", r.RSSKB>>10, r.PeakKB>>10)
	for _, f := range r.Failed {
		fmt.Fprintf(w, "\n- %s", f)
	}
	if len(r.Failed) > 0 {
		fmt.Fprintln(w)
	}
}
