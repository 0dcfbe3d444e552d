package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// wrkRun is one wrk measurement of one URL.
type wrkRun struct {
	RPS    float64 // requests per second
	Errors int     // socket errors and non-2xx/3xx responses
}

// runWrk measures url's throughput with wrk: keep-alive connections,
// pinned to cpu, for dur.
func runWrk(ctx context.Context, cpu, url string, header http.Header, conns int, dur time.Duration) (wrkRun, error) {
	return wrk(ctx, cpu, url, "", header, conns, dur)
}

// runWrkMixed loads base with every one of uris in turn, request after
// request, as wrk's script (written to script) sends them: the mixed load
// the memory figures are taken after.
func runWrkMixed(ctx context.Context, cpu, base string, uris []string, script string, header http.Header, conns int, dur time.Duration) (wrkRun, error) {
	if err := os.WriteFile(script, []byte(mixedScript(uris)), 0o644); err != nil {
		return wrkRun{}, fmt.Errorf("writing wrk's script: %w", err)
	}
	return wrk(ctx, cpu, base+uris[0], script, header, conns, dur)
}

// mixedScript is a wrk script sending the request URIs in turn. URIs are
// printable ASCII (their query escaped), which a Lua string literal holds
// as Go quotes it.
func mixedScript(uris []string) string {
	var b strings.Builder
	b.WriteString("local uris = {\n")
	for _, u := range uris {
		fmt.Fprintf(&b, "  %q,\n", u)
	}
	b.WriteString("}\nlocal i = 0\nrequest = function()\n  i = i % #uris + 1\n  return wrk.format(\"GET\", uris[i])\nend\n")
	return b.String()
}

// wrk runs wrk on url, with a script when script is not empty.
func wrk(ctx context.Context, cpu, url, script string, header http.Header, conns int, dur time.Duration) (wrkRun, error) {
	argv := []string{"wrk", "-t1", "-c" + strconv.Itoa(conns), "-d" + strconv.Itoa(max(1, int(dur.Seconds()))) + "s", "--timeout", "10s"}
	if script != "" {
		argv = append(argv, "-s", script)
	}
	for k, vs := range header {
		for _, v := range vs {
			argv = append(argv, "-H", k+": "+v)
		}
	}
	argv = append(argv, url)
	if cpu != "" {
		argv = append([]string{"taskset", "-c", cpu}, argv...)
	}
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return wrkRun{}, fmt.Errorf("running wrk on %s: %w: %s", url, err, out)
	}
	return parseWrk(string(out))
}

var (
	wrkRPS     = regexp.MustCompile(`(?m)^Requests/sec:\s+([0-9.]+)`)
	wrkNon2xx  = regexp.MustCompile(`(?m)Non-2xx or 3xx responses:\s+(\d+)`)
	wrkSockErr = regexp.MustCompile(`(?m)Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
)

// parseWrk reads wrk's report.
func parseWrk(out string) (wrkRun, error) {
	m := wrkRPS.FindStringSubmatch(out)
	if m == nil {
		return wrkRun{}, fmt.Errorf("reading wrk output: no Requests/sec in %q", out)
	}
	var r wrkRun
	r.RPS, _ = strconv.ParseFloat(m[1], 64)
	if m := wrkNon2xx.FindStringSubmatch(out); m != nil {
		n, _ := strconv.Atoi(m[1])
		r.Errors += n
	}
	if m := wrkSockErr.FindStringSubmatch(out); m != nil {
		for _, s := range m[1:] {
			n, _ := strconv.Atoi(s)
			r.Errors += n
		}
	}
	return r, nil
}

// latencyRun is one constant-rate measurement.
type latencyRun struct {
	Rate     float64 // requests per second sent
	Sent     int
	Errors   int // transport errors and non-200s
	P50, P99 time.Duration
}

// runConstantRate sends GET url at rate requests per second for dur,
// open loop: request i is due at start + i/rate and is sent then, from its
// own goroutine, on an idle keep-alive connection or a new one, whether or
// not earlier requests have answered. No request waits for another, so a
// server that stalls shows the stall in every request sent meanwhile (no
// coordinated omission). Latency runs from the send, not from when the
// request was due: a late timer on the client is the client's delay, not
// the server's.
func runConstantRate(ctx context.Context, client *http.Client, url string, header http.Header, rate float64, dur time.Duration) (latencyRun, error) {
	n := max(1, int(rate*dur.Seconds()))
	lat := make([]time.Duration, n)
	errs := make([]bool, n)
	var wg sync.WaitGroup
	start := time.Now()
	interval := time.Duration(float64(time.Second) / rate)
	for i := range n {
		due := start.Add(time.Duration(i) * interval)
		if d := time.Until(due); d > 0 {
			select {
			case <-ctx.Done():
				return latencyRun{}, ctx.Err()
			case <-time.After(d):
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sent := time.Now()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			req.Header = header
			resp, err := client.Do(req)
			if err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					errs[i] = true
				}
			}
			if err != nil {
				errs[i] = true
			}
			lat[i] = time.Since(sent)
		}()
	}
	wg.Wait()
	r := latencyRun{Rate: rate, Sent: n}
	for _, e := range errs {
		if e {
			r.Errors++
		}
	}
	slices.Sort(lat)
	r.P50, r.P99 = percentile(lat, 0.50), percentile(lat, 0.99)
	return r, nil
}

// percentile returns the q-quantile of sorted (nearest rank).
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*q+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// loadClient is the open-loop client's HTTP client: keep-alive, enough idle
// connections for the concurrency a stall causes, and no Accept-Encoding,
// so that every system sends the same identity bodies wrk gets.
func loadClient() *http.Client {
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			DisableCompression:  true,
			MaxIdleConns:        256,
			MaxIdleConnsPerHost: 256,
			IdleConnTimeout:     time.Minute,
		},
	}
}

// readBodyCount reads the "count" member of a GET /recall body without
// decoding the results.
func readBodyCount(b []byte) int {
	s := string(b[:min(len(b), 200)])
	_, after, ok := strings.Cut(s, `"count":`)
	if !ok {
		return -1
	}
	sc := bufio.NewScanner(strings.NewReader(after))
	sc.Split(bufio.ScanRunes)
	var digits strings.Builder
	for sc.Scan() {
		if c := sc.Text(); c >= "0" && c <= "9" {
			digits.WriteString(c)
		} else {
			break
		}
	}
	n, err := strconv.Atoi(digits.String())
	if err != nil {
		return -1
	}
	return n
}
