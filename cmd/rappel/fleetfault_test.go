package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/alerts/smtptest"
)

// The fleet under faults, broken as an operator would break it: a leader
// stalled (SIGSTOP) in the middle of a refresh and woken after another
// node published newer data, the shared store cut off while the leader
// refreshes, the leader killed right after an upstream change, a node
// joining from an empty data dir. After each, every node's export and
// change feed are the same, byte for byte, fetched_at included.

// retitle changes the title of notice nid upstream, in the dump and in
// its detail document.
func (f *fleetEnv) retitle(t testing.TB, nid, from, to string) {
	t.Helper()
	en := f.up.Doc("/hc/recalls-en.json")
	if !bytes.Contains(en, []byte(from)) {
		t.Fatalf("the upstream dump holds no title %q", from)
	}
	f.up.Set("/hc/recalls-en.json", bytes.ReplaceAll(en, []byte(from), []byte(to)))
	d := "/detail/en/" + nid + ".json"
	f.up.Set(d, bytes.ReplaceAll(f.up.Doc(d), []byte(from), []byte(to)))
}

// sameData fails unless every node serves the same export and the same
// change feed, byte for byte, and returns the export.
func sameData(t *testing.T, nodes ...string) string {
	t.Helper()
	var export, changes string
	for i, b := range nodes {
		code, e := get(t, b+"/recall/export?format=ndjson", "k1")
		if code != 200 {
			t.Fatalf("GET /recall/export on %s = %d %s", b, code, e)
		}
		code, c := get(t, b+"/recall/changes?limit=500", "k1")
		if code != 200 {
			t.Fatalf("GET /recall/changes on %s = %d %s", b, code, c)
		}
		if i == 0 {
			export, changes = string(e), string(c)
			continue
		}
		if string(e) != export {
			t.Fatalf("%s exports other data than %s:\n%s\n---\n%s", b, nodes[0], lineMissing(string(e), export), lineMissing(export, string(e)))
		}
		if string(c) != changes {
			t.Fatalf("%s's change feed differs from %s's:\n%s\n---\n%s", b, nodes[0], c, changes)
		}
	}
	if !strings.Contains(export, `"fetched_at"`) {
		t.Fatalf("the export holds no fetched_at: %.300s", export)
	}
	return export
}

// lineMissing returns the first line of a that b lacks, for a failure's
// message.
func lineMissing(a, b string) string {
	have := map[string]bool{}
	for _, l := range strings.Split(b, "\n") {
		have[l] = true
	}
	for _, l := range strings.Split(a, "\n") {
		if !have[l] {
			return l
		}
	}
	return "(none)"
}

// waitTitle waits until every node serves recall id with title.
func waitTitle(t *testing.T, id, title string, nodes ...string) {
	t.Helper()
	waitFor(t, id+" titled "+title+" on every node", func() bool {
		for _, b := range nodes {
			if code, body := get(t, b+"/recall/"+id, "k1"); code != 200 || !strings.Contains(string(body), title) {
				return false
			}
		}
		return true
	})
}

// testStalledLeader: the leader, a process, is stopped (SIGSTOP) while
// it refreshes data A; upstream changes to B; another node takes the
// lease and publishes B; the old leader is woken (SIGCONT). Its refresh
// of A, still in flight, must not reach its store: it serves B, its
// store and change log are the fleet's, and it serves the next change.
func testStalledLeader(t *testing.T, f *fleetEnv) {
	smtp := smtptest.MustStart(t)
	a, cmd, others := f.startLed(t, smtp.Addr)
	all := append([]string{a}, others...)
	refreshAll(t, all...) // the leader's first refresh published, everywhere
	sameData(t, all...)

	f.addRecall(t, "70040", "Stalled brand frozen peas recalled due to Listeria")
	refreshed := make(chan int, 1)
	go func() {
		// The answer comes after the node wakes; what it says is checked
		// below by what the node serves.
		req, _ := http.NewRequest(http.MethodPost, a+"/admin/refresh", nil)
		req.Header.Set("x-admin-key", adminKey)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			refreshed <- 0
			return
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		refreshed <- res.StatusCode
	}()
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	f.retitle(t, "70040", "Stalled brand frozen peas", "Woken brand frozen peas")
	leader := leaderOf(t, others...)
	t.Logf("%s took the lease %.2fs after the leader was stopped", leader, time.Since(stopped).Seconds())
	refreshAll(t, others...)
	waitTitle(t, "hc-70040", "Woken brand", others...)
	time.Sleep(time.Until(stopped.Add(20 * time.Second)))
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-refreshed:
		t.Logf("the stalled leader's POST /admin/refresh answered %d once it woke", code)
	case <-time.After(90 * time.Second):
		t.Fatal("the stalled leader's refresh never ended")
	}
	waitTitle(t, "hc-70040", "Woken brand", all...)
	settle(t, a)
	waitTitle(t, "hc-70040", "Woken brand", a) // and not overwritten since
	refreshAll(t, all...)
	sameData(t, all...)

	f.retitle(t, "70040", "Woken brand frozen peas", "Later brand frozen peas")
	refreshAll(t, all...)
	waitTitle(t, "hc-70040", "Later brand", all...)
	sameData(t, all...)
}

// startLed starts a fleet of three led by its first node, a process (so
// that it can be stopped or killed for real), and returns that node's
// base URL and process, and the two in-process followers.
func (f *fleetEnv) startLed(t *testing.T, smtpAddr string) (string, *exec.Cmd, []string) {
	t.Helper()
	a, cmd, stderr := startProcess(t, fleetNodeConfig{
		Args:   append(f.args(t.TempDir(), smtpAddr), "--alerts-confirm=false"),
		Bundle: f.bundleDir, Lease: time.Minute, SMTPTimeout: 10 * time.Second,
	})
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT) // one the test stopped
		if t.Failed() {
			t.Logf("the first leader's log:\n%s", stderr)
		}
	})
	if leaderOf(t, a) != a {
		t.Fatalf("the only node does not lead:\n%s", stderr)
	}
	waitLive(t, a)
	return a, cmd, f.startNodes(t, 2, smtpAddr, false)
}

// cutProxy is a TCP proxy to the shared store that can be cut: every
// connection through it dropped, and new ones closed as they come, as
// when the database stops or the network between them breaks.
type cutProxy struct {
	addr   string
	target string
	mu     sync.Mutex
	cut    bool
	conns  map[net.Conn]bool
}

func startCutProxy(t testing.TB, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{addr: ln.Addr().String(), target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close(); p.Cut() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *cutProxy) serve(c net.Conn) {
	p.mu.Lock()
	if p.cut {
		p.mu.Unlock()
		c.Close()
		return
	}
	p.mu.Unlock()
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[c], p.conns[up] = true, true
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, c); done <- struct{}{} }()
	go func() { io.Copy(c, up); done <- struct{}{} }()
	<-done
	c.Close()
	up.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

// Cut drops every connection and refuses new ones until Heal.
func (p *cutProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		c.Close()
	}
}

func (p *cutProxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}

// through returns f with its nodes reaching the shared store through p.
func (f *fleetEnv) through(t testing.TB, p *cutProxy) *fleetEnv {
	t.Helper()
	u, err := url.Parse(f.dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = p.addr
	g := *f
	g.dsn = u.String()
	return &g
}

// testOutage: the shared store cut off while the leader refreshes a
// change. The refresh answers 503 with Retry-After and is not stored;
// writes on every node answer 503 naming the shared store, reads go on;
// /health says degraded, and names no leader once the lease has run
// out. When the store is back the same node leads again (its lease
// outlasts the outage) and the change reaches every node.
func testOutage(t *testing.T, f *fleetEnv) {
	u, err := url.Parse(f.dsn)
	if err != nil {
		t.Fatal(err)
	}
	proxy := startCutProxy(t, u.Host)
	g := f.through(t, proxy)
	smtp := smtptest.MustStart(t)
	// A lease of 15 s, renewed every 5: it outlasts the outage.
	nodes := g.startNodesWith(t, 2, smtp.Addr, "--fleet-lease", "15s")
	leader := leaderOf(t, nodes...)
	follower := nodes[0]
	if follower == leader {
		follower = nodes[1]
	}
	refreshAll(t, nodes...) // the leader's first refresh published, everywhere
	sameData(t, nodes...)

	f.addRecall(t, "70041", "Outage brand canned peas recalled due to Listeria")
	proxy.Cut()
	cut := time.Now()
	req, _ := http.NewRequest(http.MethodPost, leader+"/admin/refresh", nil)
	req.Header.Set("x-admin-key", adminKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 503 || res.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "could not be published") {
		t.Fatalf("POST /admin/refresh on the leader with the shared store cut off = %d, Retry-After %q: %s", res.StatusCode, res.Header.Get("Retry-After"), b)
	}
	for _, n := range nodes {
		if code, _ := get(t, n+"/recall/hc-70041", "k1"); code != 404 {
			t.Fatalf("GET /recall/hc-70041 on %s during the outage = %d: the unpublished refresh was stored", n, code)
		}
		if code, _ := get(t, n+"/recall?q=peas&limit=5", "k1"); code != 200 {
			t.Fatalf("a search on %s during the outage = %d", n, code)
		}
		code, hdr, body := call(t, "POST", n+"/recall/alerts/subscribe", "k1", `{"email":"out@example.ca","q":"peas","lang":"en"}`)
		if code != 503 || hdr.Get("Retry-After") == "" || !strings.Contains(body, "shared store") {
			t.Fatalf("subscribing on %s during the outage = %d, Retry-After %q: %s", n, code, hdr.Get("Retry-After"), body)
		}
	}
	waitFor(t, "every node degraded", func() bool {
		for _, n := range nodes {
			if h := health(t, n); h.Status != "degraded" || h.Fleet == nil || !h.Fleet.Degraded || h.Fleet.Lag < 5 {
				return false
			}
		}
		return true
	})
	if time.Since(cut) > 9*time.Second {
		t.Fatalf("the nodes said degraded %.1fs into the outage; the lease (15 s) may have run out", time.Since(cut).Seconds())
	}
	t.Logf("every node said degraded %.1fs into the outage", time.Since(cut).Seconds())
	proxy.Heal()
	healed := time.Now()
	if l := leaderOf(t, nodes...); l != leader {
		t.Fatalf("%s leads after the outage; the lease %s held outlasted it", l, leader)
	}
	waitTitle(t, "hc-70041", "Outage brand", nodes...)
	t.Logf("the change reached every node %.2fs after the shared store came back", time.Since(healed).Seconds())
	settle(t, leader)
	waitFor(t, "every node ok", func() bool {
		for _, n := range nodes {
			if h := health(t, n); h.Status != "ok" {
				return false
			}
		}
		return true
	})
	if code, _, body := call(t, "POST", follower+"/recall/alerts/subscribe", "k1", `{"email":"out@example.ca","q":"peas","lang":"en"}`); code != 200 {
		t.Fatalf("subscribing after the outage = %d %s", code, body)
	}
	refreshAll(t, nodes...)
	sameData(t, nodes...)
}

// startNodesWith is startNodes with more flags, which win over the
// fleet's.
func (f *fleetEnv) startNodesWith(t testing.TB, n int, smtpAddr string, extra ...string) []string {
	t.Helper()
	g := *f
	g.extra = extra
	return g.startNodes(t, n, smtpAddr, false)
}

// testLeaderChange: one title changes upstream and the leader is killed
// before it refreshes; the node that takes the lease refreshes and
// publishes that change alone: no record put but the one, none deleted,
// no entry in the change feed for any other, and no webhook event for
// any other.
func testLeaderChange(t *testing.T, f *fleetEnv) {
	var mu sync.Mutex
	var events []string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		events = append(events, string(b))
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(hook.Close)
	smtp := smtptest.MustStart(t)
	a, cmd, others := f.startLed(t, smtp.Addr)
	all := append([]string{a}, others...)
	f.addRecall(t, "70042", "Change brand frozen corn recalled due to Listeria")
	refreshAll(t, all...)
	if code, _, body := call(t, "POST", others[0]+"/recall/webhooks", "k1", `{"url": "`+hook.URL+`/hook"}`); code != 201 {
		t.Fatalf("registering a webhook: %d %s", code, body)
	}
	sameData(t, all...)
	var cursor struct {
		Next string `json:"next"`
	}
	if code, _, body := call(t, "GET", others[0]+"/recall/changes?since=now", "k1", ""); code != 200 || json.Unmarshal([]byte(body), &cursor) != nil || cursor.Next == "" {
		t.Fatalf("GET /recall/changes?since=now = %d %s", code, body)
	}
	var before int64
	if err := f.db.QueryRow(context.Background(), `SELECT COALESCE(max(version), 0) FROM feed_publications`).Scan(&before); err != nil {
		t.Fatal(err)
	}

	f.retitle(t, "70042", "Change brand frozen corn", "Changed brand frozen corn")
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	leader := leaderOf(t, others...)
	waitTitle(t, "hc-70042", "Changed brand", others...) // its first refresh as the leader
	settle(t, leader)

	rows, err := f.db.Query(context.Background(), `SELECT version, length(body), body FROM feed_publications WHERE version > $1 ORDER BY version`, before)
	if err != nil {
		t.Fatal(err)
	}
	put, deleted, size := map[string]int{}, 0, 0
	for rows.Next() {
		var v int64
		var n int
		var body []byte
		if err := rows.Scan(&v, &n, &body); err != nil {
			t.Fatal(err)
		}
		var p struct {
			Put    []*rappel.Record `json:"put"`
			Delete []string         `json:"delete"`
		}
		if err := json.Unmarshal(body, &p); err != nil {
			t.Fatal(err)
		}
		for _, r := range p.Put {
			put[r.RecordID]++
		}
		deleted += len(p.Delete)
		size += n
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	t.Logf("the new leader published %d bytes: records put %v, %d deleted", size, put, deleted)
	if deleted != 0 || len(put) != 1 || put["hc-70042"] == 0 {
		t.Fatalf("after one title changed, the new leader put %v and deleted %d records", put, deleted)
	}

	code, _, body := call(t, "GET", others[1]+"/recall/changes?since="+url.QueryEscape(cursor.Next)+"&limit=500", "k1", "")
	if code != 200 {
		t.Fatalf("GET /recall/changes after the change = %d %s", code, body)
	}
	var page struct {
		Changes []struct {
			Type     string `json:"type"`
			RecordID string `json:"record_id"`
		} `json:"changes"`
	}
	if err := json.Unmarshal([]byte(body), &page); err != nil || len(page.Changes) == 0 {
		t.Fatalf("the change feed after one title changed: %v %s", err, body)
	}
	for _, c := range page.Changes {
		if c.RecordID != "hc-70042" || c.Type != rappel.EventRecallUpdated {
			t.Fatalf("the change feed after one title changed holds %s %s: %s", c.Type, c.RecordID, body)
		}
	}
	waitFor(t, "the webhook of the change", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(events) > 0
	})
	time.Sleep(3 * time.Second) // any spurious event has had its time
	mu.Lock()
	defer mu.Unlock()
	for _, e := range events {
		for _, m := range regexp.MustCompile(`"record_id":"([^"]+)"`).FindAllStringSubmatch(e, -1) {
			if m[1] != "hc-70042" {
				t.Fatalf("a webhook event for %s, which did not change: %s", m[1], e)
			}
		}
	}
	sameData(t, others...)
}

// testJoining: a node joining a fleet whose log holds publications, from
// an empty data dir, answers /readyz 503 until it serves the log's head:
// never ready while it serves the bundle or an older version.
func testJoining(t *testing.T, f *fleetEnv) {
	smtp := smtptest.MustStart(t)
	first := f.startNodes(t, 1, smtp.Addr, false)
	for i := range 3 {
		f.addRecall(t, "7005"+string(rune('0'+i)), "Joining brand frozen beans recalled due to Listeria")
		refreshAll(t, first...)
	}
	var latest int64
	if err := f.db.QueryRow(context.Background(), `SELECT max(version) FROM feed_publications`).Scan(&latest); err != nil {
		t.Fatal(err)
	}
	g := *f
	var mu sync.Mutex
	var unready, ready int
	var wrong string
	g.onListen = func(base string) {
		// Ask from the first moment the node listens.
		go func() {
			client := &http.Client{Timeout: 5 * time.Second}
			for range 6000 {
				res, err := client.Get(base + "/readyz")
				if err != nil {
					return
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					mu.Lock()
					unready++
					mu.Unlock()
					time.Sleep(5 * time.Millisecond)
					continue
				}
				res, err = client.Get(base + "/health")
				if err != nil {
					return
				}
				var h healthBody
				json.NewDecoder(res.Body).Decode(&h)
				res.Body.Close()
				mu.Lock()
				ready++
				if h.DatasetVersion < latest && wrong == "" {
					wrong = "ready at version " + strconv.FormatInt(h.DatasetVersion, 10)
				}
				mu.Unlock()
				return
			}
		}()
	}
	joined := g.startNodes(t, 1, smtp.Addr, false)
	waitFor(t, "the joining node ready", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return ready > 0
	})
	mu.Lock()
	defer mu.Unlock()
	t.Logf("the joining node answered /readyz 503 %d times before it was ready at version %d", unready, latest)
	if wrong != "" {
		t.Fatalf("the joining node said it was ready while behind the fleet's version %d: %s", latest, wrong)
	}
	sameData(t, append(first, joined...)...)
}
