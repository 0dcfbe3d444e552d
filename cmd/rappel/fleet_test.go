package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime/quotedprintable"
	"net"
	"net/http"
	"net/mail"
	"net/textproto"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/alerts/smtptest"
	"github.com/rappel-ca/rappel/feeds/feedstest"
	"github.com/rappel-ca/rappel/internal/logtest"
	"github.com/rappel-ca/rappel/kv/postgres/pgtest"
	"github.com/rappel-ca/rappel/plugins"
	"github.com/rappel-ca/rappel/plugins/plugintest"
)

// TestMain serves the plugin runs of live feeds when this binary is their
// child process, and stops the PostgreSQL server the fleet tests start
// (pgtest).
func TestMain(m *testing.M) {
	plugintest.ServeChild()
	pgtest.Main(m)
}

// fleetEnv is what the nodes of a test fleet share: the database, the
// agencies' feeds (a local upstream serving the samples) and the bundle.
type fleetEnv struct {
	dsn       string
	bundleDir string
	up        *feedstest.Upstream
	db        *pgx.Conn
	// extra are flags every node gets after the fleet's; onListen, when
	// set, is told each in-process node's base URL as soon as it listens.
	extra    []string
	onListen func(base string)
	cacheDir string
}

// newFleetEnv builds the bundle and starts the upstream; each fleet gets
// its database from withStore.
func newFleetEnv(t testing.TB) *fleetEnv {
	t.Helper()
	root := plugintest.ModuleRoot(t)
	// One cache of compiled plugins for every node: only the first
	// compiles.
	f := &fleetEnv{bundleDir: MustBuildBundle(t), up: feedstest.NewUpstream(t), cacheDir: t.TempDir()}
	f.up.LoadDir(t, "/hc", filepath.Join(root, "testdata", "hc"))
	f.up.LoadDir(t, "/tc", filepath.Join(root, "testdata", "tc"))
	f.up.LoadDir(t, "/detail", filepath.Join(root, "testdata", "detail"))
	return f
}

// withStore returns f with a new, empty shared store.
func (f *fleetEnv) withStore(t testing.TB) *fleetEnv {
	t.Helper()
	g := *f
	g.dsn = pgtest.DSN(t)
	ctx := context.Background()
	db, err := pgx.Connect(ctx, g.dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(ctx) })
	g.db = db
	return &g
}

// args are the flags of a node of the fleet sending through smtpAddr.
func (f *fleetEnv) args(dataDir, smtpAddr string) []string {
	pluginsDir := filepath.Join(dataDir, "plugins.d")
	if err := os.MkdirAll(pluginsDir, 0o755); err != nil {
		panic(err)
	}
	return []string{
		"--plugins-dir", pluginsDir, "--plugins-allow-unsigned", "--plugins-cache-dir", f.cacheDir,
		"--data-dir", dataDir, "--feeds", "on", "--shared-store", f.dsn,
		"--feed-hc-en", f.up.URL + "/hc/recalls-en.json", "--feed-hc-fr", f.up.URL + "/hc/recalls-fr.json",
		"--feed-tc-vrdb", f.up.URL + "/tc/vrdb.csv", "--feed-detail", f.up.URL + "/detail/{lang}/{id}.json",
		"--feed-detail-rate", "0", "--admin-key", adminKey,
		// Refreshes come from the test (POST /admin/refresh), after the
		// one every node makes at start.
		"--refresh-interval", "1h",
		"--smtp-addr", smtpAddr, "--smtp-from", "alerts@rappel.example.ca", "--public-url", "http://rappel.example.ca",
		"--alerts-interval", "200ms", "--usage-interval", "300ms",
		// A leader that dies is replaced within seconds.
		"--fleet-lease", "3s",
		"--api-keys", "k1", "--webhooks-allow-http-loopback",
		// The openFDA plugin's documents are on the loopback upstream.
		"--plugin-documents-allow-loopback",
	}
}

// startNodes runs n nodes in this process until the test ends, starting
// them together, and returns their base URLs once each has refreshed.
func (f *fleetEnv) startNodes(t testing.TB, n int, smtpAddr string, confirm bool) []string {
	t.Helper()
	ready := make(chan net.Addr, n)
	done := make(chan error, n)
	ctx, cancel := context.WithCancel(context.Background())
	var running int
	t.Cleanup(func() {
		cancel()
		for range running {
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
		}
	})
	for range n {
		c := NewServeCommand()
		args := append(f.args(t.TempDir(), smtpAddr), "--alerts-confirm="+strconv.FormatBool(confirm))
		args = append(args, f.extra...)
		if err := c.ParseFlags(args); err != nil {
			t.Fatal(err)
		}
		c.Bundle = os.DirFS(f.bundleDir)
		logs := &logtest.Buffer{}
		c.Addr, c.Logger = "127.0.0.1:0", slog.New(slog.NewTextHandler(logs, nil))
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("an in-process node's log:\n%s", logs.String())
			}
		})
		c.Ready = func(a net.Addr) { ready <- a }
		running++
		go func() { done <- c.Run(ctx) }()
	}
	var bases []string
	for len(bases) < n {
		select {
		case a := <-ready:
			bases = append(bases, "http://"+a.String())
			if f.onListen != nil {
				f.onListen(bases[len(bases)-1])
			}
		case err := <-done:
			running--
			t.Fatalf("a node ended before listening: %v", err)
		case <-time.After(90 * time.Second):
			t.Fatal("the nodes did not start listening")
		}
	}
	for _, base := range bases {
		waitLive(t, base)
	}
	return bases
}

// waitLive waits for the node's first refresh, which makes every feed live,
// or, for a follower in a fleet, for the first refresh its leader
// published.
func waitLive(t testing.TB, base string) {
	t.Helper()
	var last healthBody
	defer func() {
		if t.Failed() {
			t.Logf("%s's last /health: fleet %+v, feeds %+v", base, last.Fleet, last.Feeds)
		}
	}()
	waitFor(t, "the first refresh", func() bool {
		h := health(t, base)
		last = h
		if h.Fleet != nil && h.Fleet.Role == "follower" {
			return h.Fleet.Version >= 1 && h.Fleet.Version == h.Fleet.Latest
		}
		for _, f := range h.Feeds {
			if !f.Live {
				return false
			}
		}
		return len(h.Feeds) >= 3 // the bundled sources, and any a plugin added
	})
}

// settle waits until the node's dataset version stays the same for two
// seconds: the refreshes it was asked for have ended.
func settle(t testing.TB, base string) {
	t.Helper()
	last, since := health(t, base).DatasetVersion, time.Now()
	waitFor(t, "the refreshes under way to end", func() bool {
		if v := health(t, base).DatasetVersion; v != last {
			last, since = v, time.Now()
		}
		return time.Since(since) > 2*time.Second
	})
}

// leaderOf returns the base URL of the node that leads the fleet's feeds
// among bases.
func leaderOf(t testing.TB, bases ...string) string {
	t.Helper()
	var leader string
	waitFor(t, "a leader", func() bool {
		for _, b := range bases {
			if h := health(t, b); h.Fleet != nil && h.Fleet.Role == "leader" {
				leader = b
				return true
			}
		}
		return false
	})
	return leader
}

// addRecall publishes a new notice (id 7000x) upstream, with its detail
// document.
func (f *fleetEnv) addRecall(t testing.TB, nid, title string) {
	t.Helper()
	row := strings.NewReplacer("70009", nid, "Acme brand frozen peas recalled due to Listeria", title).Replace(newRowEN)
	detail := strings.NewReplacer("70009", nid, "Acme brand frozen peas recalled due to Listeria", title).Replace(newDetailEN)
	en := bytes.TrimSpace(f.up.Doc("/hc/recalls-en.json"))
	en = append(en[:len(en)-1], []byte(",\n"+row+"\n]")...)
	f.up.Set("/hc/recalls-en.json", en)
	f.up.Set("/detail/en/"+nid+".json", []byte(detail))
}

// refreshAll refreshes the fleet's feeds, on its leader, and waits until
// every node serves what that refresh published.
func refreshAll(t testing.TB, bases ...string) {
	t.Helper()
	leader := leaderOf(t, bases...)
	refreshEach(t, leader)
	want := health(t, leader).DatasetVersion
	seen := map[string]healthBody{}
	defer func() {
		if t.Failed() {
			for b, h := range seen {
				t.Logf("%s: version %d, fleet %+v (the leader %s was at %d)", b, h.DatasetVersion, h.Fleet, leader, want)
			}
		}
	}()
	// Every node at the leader's version, or a later one the leader made
	// meanwhile (a refresh it was asked for at its start).
	waitFor(t, "every node at the leader's version", func() bool {
		now := health(t, leader).DatasetVersion
		for _, b := range bases {
			h := health(t, b)
			seen[b] = h
			if h.DatasetVersion < want || h.DatasetVersion != now {
				return false
			}
		}
		return true
	})
}

// refreshEach refreshes the feeds of every node at once.
func refreshEach(t testing.TB, bases ...string) {
	t.Helper()
	var wg sync.WaitGroup
	for _, base := range bases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, base+"/admin/refresh", nil)
			req.Header.Set("x-admin-key", adminKey)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer res.Body.Close()
			if b, _ := io.ReadAll(res.Body); res.StatusCode != http.StatusOK {
				t.Errorf("refreshing %s: %d %s", base, res.StatusCode, b)
			}
		}()
	}
	wg.Wait()
}

// call sends a request with an optional key and JSON body.
func call(t *testing.T, method, url, key, body string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if key != "" {
		req.Header.Set("x-gateway-key", key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

// alertsFor returns the alert e-mails (not confirmations) sent to rcpt, by
// Message-ID.
func alertsFor(t *testing.T, msgs []smtptest.Message, rcpt string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, m := range msgs {
		if len(m.To) != 1 || m.To[0] != rcpt {
			continue
		}
		msg, err := mail.ReadMessage(strings.NewReader(m.Data))
		if err != nil {
			t.Fatal(err)
		}
		if id := msg.Header.Get("Message-Id"); strings.HasPrefix(id, "<alert.") {
			out[id] = append(out[id], m.Data)
		}
	}
	return out
}

// TestFleet runs fleets of rappel nodes, each node with its own data dir
// and feeds, on a shared store (one per fleet): three nodes sharing
// subscriptions, alerts and a quota (testThreeNodes), and a node killed
// while sending (testKilledSender).
func TestFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("runs several nodes")
	}
	f := newFleetEnv(t) // the bundle takes seconds to build: once
	t.Run("ThreeNodes", func(t *testing.T) { testThreeNodes(t, f.withStore(t)) })
	t.Run("KilledSender", func(t *testing.T) { testKilledSender(t, f.withStore(t)) })
	t.Run("OneRefresh", func(t *testing.T) { testOneRefresh(t, f.withStore(t)) })
	t.Run("CatchUp", func(t *testing.T) { testCatchUp(t, f.withStore(t)) })
	t.Run("KilledMidRefresh", func(t *testing.T) { testKilledMidRefresh(t, f.withStore(t)) })
	t.Run("StalledLeader", func(t *testing.T) { testStalledLeader(t, f.withStore(t)) })
	t.Run("Outage", func(t *testing.T) { testOutage(t, f.withStore(t)) })
	t.Run("LeaderChange", func(t *testing.T) { testLeaderChange(t, f.withStore(t)) })
	t.Run("Joining", func(t *testing.T) { testJoining(t, f.withStore(t)) })
	t.Run("IdempotentRetry", func(t *testing.T) { testIdempotentRetry(t, f.withStore(t)) })
}

// testKilledMidRefresh runs three nodes as processes and, six times, asks
// the leader for a refresh of 20 new notices and kills it (SIGKILL) at a
// different moment of that refresh (from at once to after it published),
// then starts it again on its data dir. A new leader takes over each time.
// At the end, every node serves exactly the records a single node with no
// fleet serves from the same upstream: the same export, byte for byte but
// for the time each fetched them.
func testKilledMidRefresh(t *testing.T, f *fleetEnv) {
	smtp := smtptest.MustStart(t)
	type node struct {
		cfg  fleetNodeConfig
		base string
		cmd  *exec.Cmd
	}
	nodes := make([]*node, 3)
	for i := range nodes {
		nodes[i] = &node{cfg: fleetNodeConfig{Args: append(f.args(t.TempDir(), smtp.Addr), "--alerts-confirm=false"),
			Bundle: f.bundleDir, Lease: time.Minute, SMTPTimeout: 10 * time.Second}}
		nodes[i].base, nodes[i].cmd, _ = startProcess(t, nodes[i].cfg)
	}
	bases := func() []string {
		var out []string
		for _, n := range nodes {
			out = append(out, n.base)
		}
		return out
	}
	for round := range 6 {
		leader := leaderOf(t, bases()...)
		waitLive(t, leader)
		for j := range 20 {
			nid := fmt.Sprint(72000 + round*20 + j)
			f.addRecall(t, nid, "Brand "+nid+" frozen peas recalled due to Listeria")
		}
		go func() { // cut short by the kill, or not: its answer does not matter
			req, _ := http.NewRequest(http.MethodPost, leader+"/admin/refresh", nil)
			req.Header.Set("x-admin-key", adminKey)
			if res, err := http.DefaultClient.Do(req); err == nil {
				res.Body.Close()
			}
		}()
		time.Sleep(time.Duration(round) * 60 * time.Millisecond)
		for _, n := range nodes {
			if n.base == leader {
				n.cmd.Process.Signal(syscall.SIGKILL)
				n.cmd.Wait()
				n.base, n.cmd, _ = startProcess(t, n.cfg)
			}
		}
	}
	refreshAll(t, bases()...)

	// The reference: one node, no fleet, the same upstream.
	ref := NewServeCommand()
	args := f.args(t.TempDir(), smtp.Addr)
	for i, a := range args {
		if a == "--shared-store" {
			args = append(args[:i:i], args[i+2:]...)
			break
		}
	}
	if err := ref.ParseFlags(append(args, "--alerts-confirm=false")); err != nil {
		t.Fatal(err)
	}
	ref.Bundle = os.DirFS(f.bundleDir)
	refBase, _ := serve(t, ref)
	waitLive(t, refBase)
	// Its read index follows its store a moment after the refresh.
	wantRecords := health(t, bases()[0]).Records
	waitFor(t, "the reference to serve its refresh", func() bool { return health(t, refBase).Records == wantRecords })
	fetched := regexp.MustCompile(`"fetched_at":"[^"]*"`)
	export := func(base string) string {
		code, _, body := call(t, "GET", base+"/recall/export?format=ndjson", "k1", "")
		if code != 200 {
			t.Fatalf("export on %s = %d", base, code)
		}
		return fetched.ReplaceAllString(body, `"fetched_at":""`)
	}
	want := export(refBase)
	if strings.Count(want, "fda-")+strings.Count(want, "\n") < 120 {
		t.Fatalf("the reference serves %d records", strings.Count(want, "\n"))
	}
	for _, b := range bases() {
		if got := export(b); got != want {
			t.Fatalf("%s's export (%d bytes, %d records) differs from a single node's (%d bytes, %d records); first difference at line %d",
				b, len(got), strings.Count(got, "\n"), len(want), strings.Count(want, "\n"), firstDiff(strings.Split(got, "\n"), strings.Split(want, "\n")))
		}
	}
}

// testCatchUp: a follower stopped (SIGKILL) while its leader publishes 30
// refreshes catches up when started again on its data dir, and then
// serves exactly the leader's records: the same export, byte for byte.
func testCatchUp(t *testing.T, f *fleetEnv) {
	smtp := smtptest.MustStart(t)
	leader := f.startNodes(t, 1, smtp.Addr, false)[0]
	if leaderOf(t, leader) != leader {
		t.Fatal("the only node does not lead")
	}
	cfg := fleetNodeConfig{Args: append(f.args(t.TempDir(), smtp.Addr), "--alerts-confirm=false"),
		Bundle: f.bundleDir, Lease: time.Minute, SMTPTimeout: 10 * time.Second}
	follower, cmd, _ := startProcess(t, cfg)
	waitLive(t, follower)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	for i := range 30 {
		for j := range 10 {
			nid := fmt.Sprint(71000 + i*10 + j)
			f.addRecall(t, nid, "Brand "+nid+" frozen peas recalled due to Listeria")
		}
		if i == 15 {
			// One recall changed in the dump and in the vehicle CSV: the
			// leader's refresh writes it twice, two entries of its log.
			f.up.Set("/hc/recalls-en.json", bytes.Replace(f.up.Doc("/hc/recalls-en.json"), []byte("reducing braking."), []byte("reducing braking and stopping power."), 1))
			f.up.Set("/tc/vrdb.csv", bytes.Replace(f.up.Doc("/tc/vrdb.csv"), []byte(`"1,350.00"`), []byte(`"1,351.00"`), 1))
		}
		refreshEach(t, leader)
	}
	want := health(t, leader).DatasetVersion
	start := time.Now()
	follower, _, _ = startProcess(t, cfg)
	waitFor(t, "the follower to catch up", func() bool { return health(t, follower).DatasetVersion == want })
	t.Logf("the follower caught up with %d versions %.2fs after it was started again", want, time.Since(start).Seconds())
	export := func(base string) string {
		code, _, body := call(t, "GET", base+"/recall/export?format=ndjson", "k1", "")
		if code != 200 {
			t.Fatalf("export on %s = %d", base, code)
		}
		return body
	}
	// The same version, the same bytes; read until the leader stands
	// still, as a refresh of its own (its interval) may publish meanwhile.
	var a, b string
	deadline := time.Now().Add(60 * time.Second)
	for {
		v := health(t, leader).DatasetVersion
		a, b = export(leader), export(follower)
		if health(t, follower).DatasetVersion == v && health(t, leader).DatasetVersion == v && a == b {
			break
		}
		if time.Now().After(deadline) {
			la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
			for i := range min(len(la), len(lb)) {
				if la[i] != lb[i] {
					t.Fatalf("the follower's export differs from the leader's at record %d:\nleader   %s\nfollower %s", i, la[i], lb[i])
				}
			}
			t.Fatalf("the follower's export has %d lines, the leader's %d", len(lb), len(la))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if strings.Count(a, "\n") < 300 {
		t.Fatalf("the follower's export has %d records, want the leader's 300 and more", strings.Count(b, "\n"))
	}
	// The change feed read on one node, and read switching node at every
	// page: the same entries, none missed or repeated.
	one, both := walkChanges(t, leader), walkChanges(t, leader, follower)
	if len(one) < 300 || !slices.Equal(one, both) {
		t.Fatalf("the change feed walked on the leader has %d entries, switching node at every page %d; first difference at %d", len(one), len(both), firstDiff(one, both))
	}
}

// walkChanges reads GET /recall/changes from the oldest entry kept to the
// end, 7 entries a page, each page on the next of bases in turn, and
// returns each entry's number, type and record_id.
func walkChanges(t *testing.T, bases ...string) []string {
	t.Helper()
	var out []string
	since := ""
	for i := 0; ; i++ {
		url := bases[i%len(bases)] + "/recall/changes?limit=7"
		if since != "" {
			url += "&since=" + since
		}
		code, _, body := call(t, "GET", url, "k1", "")
		var page struct {
			Changes []struct {
				Type     string `json:"type"`
				Seq      uint64 `json:"seq"`
				RecordID string `json:"record_id"`
			} `json:"changes"`
			Next    string `json:"next"`
			HasMore bool   `json:"has_more"`
		}
		if code != 200 || json.Unmarshal([]byte(body), &page) != nil {
			t.Fatalf("GET %s = %d %s", url, code, body)
		}
		for _, c := range page.Changes {
			out = append(out, fmt.Sprintf("%d %s %s", c.Seq, c.Type, c.RecordID))
		}
		since = page.Next
		if !page.HasMore {
			return out
		}
	}
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// testOneRefresh: in a fleet of three, one node (a process, the first to
// start) leads; a refresh fetches the agencies once for the fleet, and
// every node serves the new recall at the leader's dataset version, with
// the same page ETag. The leader killed (SIGKILL), another node takes the
// lease within it and refreshes, and every node follows it.
func testOneRefresh(t *testing.T, f *fleetEnv) {
	smtp := smtptest.MustStart(t)
	a, cmd, stderr := startProcess(t, fleetNodeConfig{
		Args:   append(f.args(t.TempDir(), smtp.Addr), "--alerts-confirm=false"),
		Bundle: f.bundleDir, Lease: time.Minute, SMTPTimeout: 10 * time.Second,
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the first node's log:\n%s", stderr)
		}
	})
	if leaderOf(t, a) != a {
		t.Fatalf("the only node does not lead:\n%s", stderr)
	}
	waitLive(t, a)
	followers := f.startNodes(t, 2, smtp.Addr, false)
	all := append([]string{a}, followers...)
	if l := leaderOf(t, all...); l != a {
		t.Fatalf("%s leads, want %s, the first", l, a)
	}

	check := func(id string, nodes ...string) {
		t.Helper()
		var version int64
		var etag string
		for i, b := range nodes {
			if code, _ := get(t, b+"/recall/"+id, "k1"); code != 200 {
				t.Fatalf("GET /recall/%s on %s = %d", id, b, code)
			}
			h := health(t, b)
			code, hdr, _ := call(t, "GET", b+"/recall?q=peas&limit=5", "k1", "")
			if code != 200 {
				t.Fatalf("GET /recall on %s = %d", b, code)
			}
			if i == 0 {
				version, etag = h.DatasetVersion, hdr.Get("ETag")
				continue
			}
			if h.DatasetVersion != version || hdr.Get("ETag") != etag {
				t.Fatalf("%s serves version %d, ETag %s; %s version %d, ETag %s", b, h.DatasetVersion, hdr.Get("ETag"), nodes[0], version, etag)
			}
		}
	}
	f.up.ResetHits()
	f.addRecall(t, "70020", "Acme brand frozen peas and carrots recalled due to Listeria")
	start := time.Now()
	refreshAll(t, all...)
	t.Logf("every node served the leader's refresh %.2fs after it was asked for", time.Since(start).Seconds())
	check("hc-70020", all...)
	if n := f.up.Hits("/hc/"); n != 2 {
		t.Fatalf("the dumps were fetched %d times for one refresh of a fleet of 3, want 2 (English and French, once)", n)
	}

	// A plugin for a new source uploaded to the leader: every node serves
	// its records and accepts its agency, though only the leader runs it.
	wasm, n := openfdaPlugin(t, f.up)
	if code, body := putPlugin(t, a, "openfda", wasm, nil); code != 201 {
		t.Fatalf("PUT /admin/plugins/openfda on the leader = %d %s", code, body)
	}
	waitFor(t, "the new source's records on every node", func() bool {
		for _, b := range all {
			if code, body := get(t, b+"/recall?recall_agency=FDA&limit=100", "k1"); code != 200 || strings.Count(string(body), `"record_id":"fda-`) != n {
				return false
			}
		}
		return true
	})

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	killed := time.Now()
	leader := leaderOf(t, followers...)
	t.Logf("%s took the lease %.2fs after the leader was killed", leader, time.Since(killed).Seconds())
	waitLive(t, leader) // its first refresh as the leader
	settle(t, leader)   // and any it was asked for meanwhile
	f.up.ResetHits()
	f.addRecall(t, "70021", "Bulk peas recalled due to Listeria")
	refreshAll(t, followers...)
	check("hc-70021", followers...)
	if n := f.up.Hits("/hc/"); n != 2 {
		t.Fatalf("the dumps were fetched %d times after the failover, want 2", n)
	}
	// The new leader runs the plugin its predecessor activated: the new
	// source is still refreshed, from the fleet's record of it.
	if a := activeOf(adminPlugins(t, leader), "openfda"); a == nil || a.SHA256 != plugins.SHA256(wasm) || a.From != "fleet" {
		t.Fatalf("the new leader's openfda plugin: %+v", a)
	}
	if fd := feed(t, leader, "openfda"); !fd.Live || fd.LastError != "" || fd.Records != n {
		t.Fatalf("the new leader's openfda feed: %+v", fd)
	}
	for _, b := range followers {
		if code, body := get(t, b+"/recall?recall_agency=FDA&limit=100", "k1"); code != 200 || strings.Count(string(body), `"record_id":"fda-`) != n {
			t.Fatalf("after the failover, recall_agency=FDA on %s = %d", b, code)
		}
	}
}

// testThreeNodes: a subscription made on A, confirmed on B and
// unsubscribed on C; a new recall that every node refreshes at once
// reaches the subscriber exactly once; a key issued once counts its
// requests on every node against one quota.
func testThreeNodes(t *testing.T, f *fleetEnv) {
	smtp := smtptest.MustStart(t)
	out := mustKeys(t, t.TempDir(), "add", "--plan", "free", "--label", "fleet", "--shared-store", f.dsn)
	key, _, _ := strings.Cut(out, "\n")
	nodes := f.startNodes(t, 3, smtp.Addr, true)
	a, b, c := nodes[0], nodes[1], nodes[2]
	requests := 0 // the key's requests, all nodes together

	code, _, body := call(t, "POST", a+"/recall/alerts/subscribe", key, `{"email":"ana@example.ca","q":"peas","lang":"en"}`)
	requests++
	var sub rappel.SubscribeResult
	if json.Unmarshal([]byte(body), &sub); code != 200 || sub.Status != rappel.SubPending || sub.Token == "" {
		t.Fatalf("subscribing on A: %d %s", code, body)
	}
	var confirm string
	waitFor(t, "the confirmation e-mail", func() bool {
		for _, m := range smtp.Messages() {
			if confirm = regexp.MustCompile(`/recall/alerts/confirm\?token=[A-Za-z0-9_-]{22}`).FindString(decodedBody(t, m.Data)); confirm != "" {
				return true
			}
		}
		return false
	})
	if code, _, body := call(t, "POST", b+confirm, "", ""); code != 200 || !strings.Contains(body, `"subscribed"`) {
		t.Fatalf("confirming on B: %d %s", code, body)
	}

	t.Run("AlertOnce", func(t *testing.T) {
		f.addRecall(t, "70009", "Acme brand frozen peas recalled due to Listeria")
		refreshAll(t, a, b, c)
		var ids []string
		waitFor(t, "the alert", func() bool {
			for id := range alertsFor(t, smtp.Messages(), "ana@example.ca") {
				ids = append(ids, id)
			}
			return len(ids) > 0
		})
		// Every node has the recall and matched (or skipped) it; give the
		// others' matchers and senders a few passes to do wrong.
		waitFor(t, "an empty outbox", func() bool { return pending(t, f) == 0 })
		time.Sleep(10 * 200 * time.Millisecond)
		got := alertsFor(t, smtp.Messages(), "ana@example.ca")
		if len(got) != 1 {
			t.Fatalf("%d alert e-mails, want 1: %v", len(got), got)
		}
		for id, copies := range got {
			if len(copies) != 1 || !strings.Contains(copies[0], "hc-70009") {
				t.Fatalf("alert %s sent %d times; body:\n%s", id, len(copies), copies[0])
			}
		}
		var matched int
		if err := f.db.QueryRow(context.Background(), `SELECT count(*) FROM alert_matched WHERE record = 'hc-70009'`).Scan(&matched); err != nil || matched != 1 {
			t.Fatalf("hc-70009 matched %d times (%v)", matched, err)
		}
	})

	t.Run("UnsubscribeOnC", func(t *testing.T) {
		code, _, body := call(t, "POST", c+"/recall/alerts/unsubscribe?token="+sub.Token, "", "")
		if code != 200 || !strings.Contains(body, `"unsubscribed"`) {
			t.Fatalf("unsubscribing on C: %d %s", code, body)
		}
		before := len(smtp.Messages())
		f.addRecall(t, "70010", "Bulk frozen peas recalled due to Listeria")
		refreshAll(t, a, b, c)
		waitFor(t, "hc-70010 matched", func() bool {
			var n int
			err := f.db.QueryRow(context.Background(), `SELECT count(*) FROM alert_matched WHERE record = 'hc-70010'`).Scan(&n)
			return err == nil && n == 1
		})
		time.Sleep(10 * 200 * time.Millisecond)
		if after := len(smtp.Messages()); after != before || pending(t, f) != 0 {
			t.Fatalf("%d e-mails after unsubscribing, want %d", after, before)
		}
	})

	t.Run("QuotaShared", func(t *testing.T) {
		id := "/recall/hc-70009"
		for i, n := range []int{3, 2, 1} {
			for range n {
				if code, _, body := call(t, "GET", nodes[i]+id, key, ""); code != 200 {
					t.Fatalf("node %d: %d %s", i, code, body)
				}
				requests++
			}
		}
		// Every node pushes its count within --usage-interval: the store
		// adds them up.
		waitFor(t, "the counts pushed", func() bool { return keyUsage(t, f, key) == requests })
		// And each node adopts the fleet's count: node C's next answer
		// leaves the quota minus every request made, on any node.
		var last string
		waitFor(t, "node C to see the fleet's count", func() bool {
			_, h, _ := call(t, "GET", c+id, key, "")
			requests++
			last = h.Get("RateLimit")
			m := monthlyLeft.FindStringSubmatch(last)
			return m != nil && m[1] == strconv.Itoa(100_000-requests)
		})
		waitFor(t, "the last counts pushed", func() bool { return keyUsage(t, f, key) == requests })
	})
}

// pending returns the outbox rows not yet sent or failed.
func pending(t *testing.T, f *fleetEnv) int {
	t.Helper()
	var n int
	if err := f.db.QueryRow(context.Background(), `SELECT count(*) FROM alert_outbox WHERE status = 'pending'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// keyUsage returns the shared store's count of key this month.
func keyUsage(t *testing.T, f *fleetEnv, key string) int {
	t.Helper()
	var n int
	err := f.db.QueryRow(context.Background(), `SELECT COALESCE(SUM(requests), 0) FROM key_usage WHERE key_id = $1 AND month = $2`,
		rappel.KeyID(sha256Sum(key)), rappel.UsageMonth(time.Now())).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The child node of testKilledSender reads its settings here.
const envFleetNode = "RAPPEL_TEST_FLEET_NODE"

// fleetNodeConfig is the child node's flags and alert timing.
type fleetNodeConfig struct {
	Args               []string
	Bundle             string
	Lease, SMTPTimeout time.Duration
}

// TestFleetNodeProcess is a node run as a child process by
// testKilledSender, so that it can be killed for real: it serves until
// killed, after printing its address.
func TestFleetNodeProcess(t *testing.T) {
	raw := os.Getenv(envFleetNode)
	if raw == "" {
		t.Skip("run as a child process by TestFleet/KilledSender")
	}
	var cfg fleetNodeConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		t.Fatal(err)
	}
	c := NewServeCommand()
	if err := c.ParseFlags(cfg.Args); err != nil {
		t.Fatal(err)
	}
	c.Bundle = os.DirFS(cfg.Bundle)
	c.Alerts.Lease, c.Alerts.SMTPTimeout = cfg.Lease, cfg.SMTPTimeout
	c.Addr = "127.0.0.1:0"
	c.Ready = func(a net.Addr) { fmt.Printf("listening %s\n", a) }
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// testKilledSender kills (SIGKILL) node A while its SMTP server holds an
// alert's DATA unanswered, so A dies holding the claim; node B, started
// afterwards, finds the recall matched already, waits out A's lease and
// sends the alert: once, with the Message-ID A was sending.
//
// A's lease outlasts B's start, so that B has fetched the recall by the
// time it claims the alert (a node lacking an alert's recall postpones the
// digest, see alerts.Sender.RecordWait); B sends as soon as the lease ends.
func testKilledSender(t *testing.T, f *fleetEnv) {
	hole := startBlackhole(t)
	const lease, smtpTimeout = 15 * time.Second, 10 * time.Second
	a, cmd, stderr := startProcess(t, fleetNodeConfig{
		Args:   append(f.args(t.TempDir(), hole.addr), "--alerts-confirm=false", "--api-keys", "dev-key"),
		Bundle: f.bundleDir, Lease: lease, SMTPTimeout: smtpTimeout,
	})
	waitLive(t, a)
	// A word of this recall alone: the feed still holds the recalls the
	// other subtests added, which A's first live refresh announces, and
	// whose alert must not be the one held.
	code, _, body := call(t, "POST", a+"/recall/alerts/subscribe", "dev-key", `{"email":"ana@example.ca","q":"okra","lang":"en"}`)
	if code != 200 || !strings.Contains(body, `"subscribed"`) {
		t.Fatalf("subscribing on A: %d %s", code, body)
	}
	f.addRecall(t, "70011", "Acme brand frozen okra recalled due to Listeria")
	refreshAll(t, a)
	var held string
	select {
	case held = <-hole.data:
	case <-time.After(60 * time.Second):
		t.Fatalf("node A sent nothing:\n%s", stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	msg, err := mail.ReadMessage(strings.NewReader(held))
	if err != nil {
		t.Fatal(err)
	}
	heldID := msg.Header.Get("Message-Id")
	var claimedBy string
	if err := f.db.QueryRow(context.Background(), `SELECT claimed_by FROM alert_outbox WHERE record = 'hc-70011' AND status = 'pending'`).Scan(&claimedBy); err != nil || claimedBy == "" {
		t.Fatalf("node A died without a claim on the alert (%q, %v)", claimedBy, err)
	}

	smtp := smtptest.MustStart(t)
	f.startNodes(t, 1, smtp.Addr, false)
	waitFor(t, "node B to send the alert", func() bool { return len(alertsFor(t, smtp.Messages(), "ana@example.ca")) > 0 })
	time.Sleep(10 * 200 * time.Millisecond) // a few more of B's passes
	got := alertsFor(t, smtp.Messages(), "ana@example.ca")
	if len(got) != 1 || len(got[heldID]) != 1 {
		t.Fatalf("node B sent %v, want %s once", got, heldID)
	}
	var status, by string
	if err := f.db.QueryRow(context.Background(), `SELECT status, claimed_by FROM alert_outbox WHERE record = 'hc-70011'`).Scan(&status, &by); err != nil || status != rappel.AlertSent || by == claimedBy {
		t.Fatalf("the alert's row: %s, claimed by %q (A was %q), %v", status, by, claimedBy, err)
	}
}

// startProcess starts a node as a child process (TestFleetNodeProcess),
// so that it can be killed for real, and returns its base URL once it
// listens, the process and its standard error.
func startProcess(t testing.TB, cfg fleetNodeConfig) (string, *exec.Cmd, *bytes.Buffer) {
	t.Helper()
	b, _ := json.Marshal(cfg)
	cmd := exec.Command(os.Args[0], "-test.run=^TestFleetNodeProcess$")
	cmd.Env = append(os.Environ(), envFleetNode+"="+string(b))
	stderr := new(bytes.Buffer)
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "listening "); ok {
				addr <- a
			}
		}
	}()
	select {
	case got := <-addr:
		return "http://" + got, cmd, stderr
	case <-time.After(90 * time.Second):
		t.Fatalf("the node process did not start:\n%s", stderr.String())
	}
	return "", nil, nil
}

// blackhole is an SMTP server that takes a message's DATA and never
// answers it, as a server would while its client is killed mid-send.
type blackhole struct {
	addr string
	data chan string // each message's DATA, once received
}

func startBlackhole(t *testing.T) *blackhole {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &blackhole{addr: ln.Addr().String(), data: make(chan string, 16)}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer conn.Close()
				h.serve(textproto.NewConn(conn))
			}()
		}
	}()
	return h
}

func (h *blackhole) serve(c *textproto.Conn) {
	c.PrintfLine("220 blackhole ESMTP")
	for {
		line, err := c.ReadLine()
		if err != nil {
			return
		}
		switch verb := strings.ToUpper(strings.SplitN(line, " ", 2)[0]); verb {
		case "DATA":
			c.PrintfLine("354 go ahead")
			b, err := c.ReadDotBytes()
			if err != nil {
				return
			}
			h.data <- string(b)
			io.Copy(io.Discard, c.R) // no answer: hold until the client is gone
			return
		case "QUIT":
			c.PrintfLine("221 bye")
			return
		default:
			c.PrintfLine("250 ok")
		}
	}
}

// decodedBody returns the body of an e-mail, quoted-printable decoded.
func decodedBody(tb testing.TB, data string) string {
	tb.Helper()
	msg, err := mail.ReadMessage(strings.NewReader(data))
	if err != nil {
		tb.Fatal(err)
	}
	b, _ := io.ReadAll(quotedprintable.NewReader(msg.Body))
	return string(b)
}
