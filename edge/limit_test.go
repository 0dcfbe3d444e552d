package edge

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/kv/kvtest"
)

// manualClock is a fake clock that moves only when told.
type manualClock struct{ ns atomic.Int64 }

func newManualClock(t time.Time) *manualClock {
	c := &manualClock{}
	c.ns.Store(t.UnixNano())
	return c
}

func (c *manualClock) Now() time.Time      { return time.Unix(0, c.ns.Load()).UTC() }
func (c *manualClock) Add(d time.Duration) { c.ns.Add(int64(d)) }

// testPlans are small plans, so that tests reach the limits in a few
// requests.
var testPlans = map[string]rappel.Plan{
	"tiny":  {Name: "tiny", Rate: 1, Burst: 3, Monthly: 1000},
	"quota": {Name: "quota", Rate: 1000, Burst: 1000, Monthly: 3},
}

// keyedEnv is a server whose keys are issued into a real key store on
// disk, with a real Pebble record store for the monthly counts.
type keyedEnv struct {
	s     *Server
	url   string
	keys  *kv.Keys
	svc   *KeyService
	clock *manualClock
	dir   string
}

// mustKeyedEnv returns a keyedEnv at now, over dir's stores (a new temp
// dir when dir is "").
func mustKeyedEnv(tb testing.TB, dir string, now time.Time) *keyedEnv {
	tb.Helper()
	if dir == "" {
		dir = tb.TempDir()
	}
	e := &keyedEnv{dir: dir, clock: newManualClock(now)}
	e.keys = kv.NewKeys(filepath.Join(dir, "keys"))
	e.svc = NewKeyService(e.keys, NewStaticKeys([]string{testKey}))
	e.svc.Refresh = 0 // tests reload by hand
	if err := e.svc.Open(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.svc.Close() })
	e.s, _ = MustServer(tb, MustCatalog(tb, testRecords()))
	e.s.Keys = e.svc
	e.s.Plans = testPlans
	e.s.Now = e.clock.Now
	e.url = MustHTTP(tb, e.s.Handler()).URL
	return e
}

// issue adds a key of plan to the store and reloads the service.
func (e *keyedEnv) issue(tb testing.TB, plan string) string {
	tb.Helper()
	key, hash := rappel.NewKey()
	a := &rappel.APIKey{ID: rappel.KeyID(hash), Plan: plan, Label: "test", Created: e.clock.Now()}
	if err := e.keys.AddKey(context.Background(), hash, a); err != nil {
		tb.Fatal(err)
	}
	if err := e.svc.Reload(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return key
}

// get requests path with key (none when empty) and returns the status,
// headers and the detail of an error body.
func (e *keyedEnv) get(tb testing.TB, path, key string, hdr ...string) (int, http.Header, string) {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, e.url+path, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if key != "" {
		req.Header.Set("x-gateway-key", key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Detail any `json:"detail"`
	}
	if res.StatusCode >= 400 {
		if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
			tb.Fatalf("GET %s: %d with a body that is not JSON: %v", path, res.StatusCode, err)
		}
	}
	detail, _ := body.Detail.(string)
	return res.StatusCode, res.Header, detail
}

// march2025 is a time in a 31-day month, mid-second.
var march2025 = time.Date(2025, 3, 10, 12, 0, 0, 500_000_000, time.UTC)

func TestLimit_Burst(t *testing.T) {
	e := mustKeyedEnv(t, "", march2025)
	key := e.issue(t, "tiny")
	policy := `"burst";q=3;w=3, "monthly";q=1000;w=2678400`
	untilApril := strconv.Itoa(int(time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC).Sub(march2025).Seconds()) + 1)
	for i, left := range []int{2, 1, 0} {
		code, h, _ := e.get(t, "/recall/hc-73841", key)
		if code != http.StatusOK {
			t.Fatalf("request %d: %d", i+1, code)
		}
		want := fmt.Sprintf(`"burst";r=%d;t=1, "monthly";r=%d;t=%s`, left, 1000-(i+1), untilApril)
		if got := h.Get("RateLimit"); got != want {
			t.Errorf("request %d: RateLimit %q, want %q", i+1, got, want)
		}
		if got := h.Get("RateLimit-Policy"); got != policy {
			t.Errorf("request %d: RateLimit-Policy %q, want %q", i+1, got, policy)
		}
		if h.Get("Retry-After") != "" {
			t.Errorf("request %d: Retry-After on a 200", i+1)
		}
	}
	code, h, detail := e.get(t, "/recall/hc-73841", key)
	if code != http.StatusTooManyRequests {
		t.Fatalf("fourth request in the same instant: %d, want 429", code)
	}
	if h.Get("Retry-After") != "1" || !strings.HasPrefix(h.Get("RateLimit"), `"burst";r=0;t=1, "monthly";r=997;`) || h.Get("RateLimit-Policy") != policy {
		t.Errorf("429 headers: Retry-After %q, RateLimit %q, RateLimit-Policy %q", h.Get("Retry-After"), h.Get("RateLimit"), h.Get("RateLimit-Policy"))
	}
	if !strings.Contains(detail, "Rate limit exceeded") || !strings.Contains(detail, "tiny plan allows 1 requests a second with bursts of 3") || !strings.Contains(detail, "retry in 1 s") {
		t.Errorf("429 detail %q", detail)
	}
	// A refused request takes no token, and the quota does not count it.
	e.clock.Add(time.Second)
	code, h, _ = e.get(t, "/recall/hc-73841", key)
	if code != http.StatusOK || !strings.HasPrefix(h.Get("RateLimit"), `"burst";r=0;t=1, "monthly";r=996;`) {
		t.Fatalf("a second later: %d, RateLimit %q", code, h.Get("RateLimit"))
	}
	// After a long pause the bucket is full again, never fuller.
	e.clock.Add(time.Hour)
	_, h, _ = e.get(t, "/recall/hc-73841", key)
	if !strings.HasPrefix(h.Get("RateLimit"), `"burst";r=2;t=1,`) {
		t.Fatalf("after an hour: RateLimit %q", h.Get("RateLimit"))
	}
}

func TestLimit_Headers(t *testing.T) {
	e := mustKeyedEnv(t, "", march2025)
	key := e.issue(t, "tiny")
	t.Run("KeyedErrors", func(t *testing.T) {
		for _, path := range []string{"/recall?limit=0", "/recall/hc-00000", "/recall?nope=1"} {
			code, h, _ := e.get(t, path, key)
			if code < 400 || code == http.StatusTooManyRequests || h.Get("RateLimit") == "" || h.Get("RateLimit-Policy") == "" {
				t.Errorf("GET %s: %d, RateLimit %q, RateLimit-Policy %q", path, code, h.Get("RateLimit"), h.Get("RateLimit-Policy"))
			}
		}
	})
	t.Run("Public", func(t *testing.T) {
		code, h, _ := e.get(t, "/health", key)
		if code != http.StatusOK || h.Get("RateLimit") != "" || h.Get("RateLimit-Policy") != "" {
			t.Errorf("GET /health: %d, RateLimit %q, RateLimit-Policy %q", code, h.Get("RateLimit"), h.Get("RateLimit-Policy"))
		}
	})
	t.Run("DevelopmentKey", func(t *testing.T) {
		for range 10 {
			code, h, _ := e.get(t, "/recall/hc-73841", testKey)
			if code != http.StatusOK || h.Get("RateLimit") != "" {
				t.Fatalf("development key: %d, RateLimit %q", code, h.Get("RateLimit"))
			}
		}
	})
}

func TestLimit_ForbiddenDoesNotCount(t *testing.T) {
	e := mustKeyedEnv(t, "", march2025)
	key := e.issue(t, "tiny")
	revoked := e.issue(t, "tiny")
	id := rappel.KeyID(sha(revoked))
	if _, err := e.keys.RevokeKey(context.Background(), id, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.s.GatewayHost = "gw.example"
	for range 10 {
		for _, k := range []string{"", "rk_" + strings.Repeat("A", 43), revoked, key} {
			// The valid key is refused too: it has the wrong gateway host.
			code, h, _ := e.get(t, "/recall/hc-73841", k, "x-gateway-host", "other.example")
			if code != http.StatusForbidden || h.Get("RateLimit") != "" || h.Get("RateLimit-Policy") != "" {
				t.Fatalf("403: %d, RateLimit %q", code, h.Get("RateLimit"))
			}
		}
	}
	code, h, _ := e.get(t, "/recall/hc-73841", key, "x-gateway-host", "gw.example")
	if code != http.StatusOK || !strings.HasPrefix(h.Get("RateLimit"), `"burst";r=2;t=1, "monthly";r=999;`) {
		t.Fatalf("after forty 403s: %d, RateLimit %q; a 403 must cost nothing", code, h.Get("RateLimit"))
	}
}

func TestLimit_Quota(t *testing.T) {
	e := mustKeyedEnv(t, "", march2025)
	key := e.issue(t, "quota")
	for i := range 3 {
		if code, _, _ := e.get(t, "/recall/hc-73841", key); code != http.StatusOK {
			t.Fatalf("request %d: %d", i+1, code)
		}
	}
	code, h, detail := e.get(t, "/recall/hc-73841", key)
	untilApril := int64(time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC).Sub(march2025).Seconds()) + 1
	if code != http.StatusTooManyRequests || h.Get("Retry-After") != strconv.FormatInt(untilApril, 10) {
		t.Fatalf("fourth request: %d, Retry-After %q, want 429 and %d", code, h.Get("Retry-After"), untilApril)
	}
	if want := fmt.Sprintf(`"monthly";r=0;t=%d`, untilApril); !strings.HasSuffix(h.Get("RateLimit"), want) {
		t.Errorf("RateLimit %q, want it to end in %q", h.Get("RateLimit"), want)
	}
	if !strings.Contains(detail, "Monthly quota exceeded") || !strings.Contains(detail, "quota plan allows 3 requests a calendar month (UTC)") || !strings.Contains(detail, "2025-04-01T00:00:00Z") {
		t.Errorf("detail %q", detail)
	}
	// Over quota, the bucket keeps its tokens: the 429 shows them.
	if !strings.HasPrefix(h.Get("RateLimit"), `"burst";r=997;`) {
		t.Errorf("RateLimit %q: a request refused by the quota took a token", h.Get("RateLimit"))
	}
}

func TestLimit_MonthRollover(t *testing.T) {
	lastSecond := time.Date(2025, 1, 31, 23, 59, 59, 0, time.UTC)
	e := mustKeyedEnv(t, "", lastSecond)
	key := e.issue(t, "quota")
	for range 3 {
		e.get(t, "/recall/hc-73841", key)
	}
	code, h, _ := e.get(t, "/recall/hc-73841", key)
	if code != http.StatusTooManyRequests || h.Get("Retry-After") != "1" {
		t.Fatalf("last second of January: %d, Retry-After %q", code, h.Get("Retry-After"))
	}
	e.clock.Add(time.Second)
	code, h, _ = e.get(t, "/recall/hc-73841", key)
	if code != http.StatusOK {
		t.Fatalf("first second of February: %d, want 200 with a new month's quota", code)
	}
	feb := int64(28 * 24 * 3600)
	if want := fmt.Sprintf(`"monthly";r=2;t=%d`, feb); !strings.HasSuffix(h.Get("RateLimit"), want) {
		t.Errorf("RateLimit %q, want it to end in %q", h.Get("RateLimit"), want)
	}
	if want := fmt.Sprintf(`"monthly";q=3;w=%d`, feb); !strings.HasSuffix(h.Get("RateLimit-Policy"), want) {
		t.Errorf("RateLimit-Policy %q, want it to end in %q (February's length)", h.Get("RateLimit-Policy"), want)
	}
}

func TestLimit_QuotaPersists(t *testing.T) {
	dir := t.TempDir()
	e := mustKeyedEnv(t, dir, march2025)
	key := e.issue(t, "quota")
	other := e.issue(t, "tiny")
	st := kvtest.OpenAt(t, filepath.Join(dir, "pebble"))
	e.s.Quota = st
	if err := e.s.LoadUsage(context.Background()); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		e.get(t, "/recall/hc-73841", key)
	}
	e.get(t, "/recall/hc-73841", other)
	if err := e.s.SaveUsage(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	// A new server on the same data dir, as after a restart.
	e2 := mustKeyedEnv(t, dir, march2025.Add(time.Minute))
	st = kvtest.OpenAt(t, filepath.Join(dir, "pebble"))
	defer st.Close()
	e2.s.Quota = st
	if err := e2.s.LoadUsage(context.Background()); err != nil {
		t.Fatal(err)
	}
	code, h, _ := e2.get(t, "/recall/hc-73841", key)
	if code != http.StatusOK || !strings.Contains(h.Get("RateLimit"), `"monthly";r=0;`) {
		t.Fatalf("third request after the restart: %d, RateLimit %q; the first two were forgotten", code, h.Get("RateLimit"))
	}
	if code, _, _ := e2.get(t, "/recall/hc-73841", key); code != http.StatusTooManyRequests {
		t.Fatalf("fourth request: %d, want 429", code)
	}
	_, h, _ = e2.get(t, "/recall/hc-73841", other)
	if !strings.Contains(h.Get("RateLimit"), `"monthly";r=998;`) {
		t.Fatalf("other key: RateLimit %q", h.Get("RateLimit"))
	}
	// Last month's counts do not carry into a new month.
	e3 := mustKeyedEnv(t, dir, time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC))
	e3.s.Quota = st
	if err := e3.s.LoadUsage(context.Background()); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := e3.get(t, "/recall/hc-73841", key); code != http.StatusOK {
		t.Fatalf("in April: %d", code)
	}
}

// TestLimit_QuotaShared runs two servers, as two nodes of a fleet, over
// one key store and one QuotaStore: a key's requests on both count against
// its one monthly quota once the nodes have pushed their counts.
func TestLimit_QuotaShared(t *testing.T) {
	dir := t.TempDir()
	a := mustKeyedEnv(t, dir, march2025)
	b := mustKeyedEnv(t, dir, march2025)
	key := a.issue(t, "quota") // 3 a month
	if err := b.svc.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := kvtest.OpenAt(t, filepath.Join(dir, "pebble"))
	defer st.Close()
	ctx := context.Background()
	for _, e := range []*keyedEnv{a, b} {
		e.s.Quota = st
		if err := e.s.LoadUsage(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if code, _, _ := a.get(t, "/recall/hc-73841", key); code != http.StatusOK {
			t.Fatalf("on node A: %d", code)
		}
	}
	// Pushing twice without new requests must not count them twice.
	for range 2 {
		if err := a.s.SaveUsage(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// B has seen the key once: its push sends that request and brings
	// back A's two.
	if code, _, _ := b.get(t, "/recall/hc-73841", key); code != http.StatusOK {
		t.Fatalf("first request on node B: %d", code)
	}
	if err := b.s.SaveUsage(ctx); err != nil {
		t.Fatal(err)
	}
	if code, h, _ := b.get(t, "/recall/hc-73841", key); code != http.StatusTooManyRequests {
		t.Fatalf("fourth request of the fleet, on node B: %d (RateLimit %q), want 429", code, h.Get("RateLimit"))
	}
	// A learns B's request at its next push, though it made none since.
	if err := a.s.SaveUsage(ctx); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := a.get(t, "/recall/hc-73841", key); code != http.StatusTooManyRequests {
		t.Fatalf("on node A after its push: %d, want 429", code)
	}
	got, err := st.LoadUsage(ctx, rappel.UsageMonth(march2025))
	if err != nil || len(got) != 1 {
		t.Fatalf("the store's counts: %v, %v", got, err)
	}
	for _, n := range got {
		if n != 3 {
			t.Fatalf("the store counts %d requests, want 3", n)
		}
	}
}

// duringPush is a QuotaStore that runs during before each push reaches the
// store: requests counted while a push is on its way.
type duringPush struct {
	rappel.QuotaStore
	during func()
}

func (d duringPush) AddUsage(ctx context.Context, month string, deltas map[string]int64) (map[string]int64, error) {
	d.during()
	return d.QuotaStore.AddUsage(ctx, month, deltas)
}

// TestLimit_PushWhileCounting pushes counts while two nodes count requests
// of one key: no request may be lost or counted twice, whichever way the
// pushes and the requests interleave.
func TestLimit_PushWhileCounting(t *testing.T) {
	dir := t.TempDir()
	st := kvtest.OpenAt(t, filepath.Join(dir, "pebble"))
	defer st.Close()
	ctx := context.Background()
	key := &rappel.APIKey{ID: "aaaaaaaaaaaa", Plan: "count"}
	var nodes []*Server
	for range 2 {
		e := mustKeyedEnv(t, dir, march2025)
		e.s.Plans = map[string]rappel.Plan{"count": {Name: "count", Monthly: 1 << 30}}
		nodes = append(nodes, e.s)
	}
	w := &headerSink{h: http.Header{}}
	count := func(s *Server, n int) {
		for range n {
			if err := s.limit(w, key); err != nil {
				t.Error(err)
			}
		}
	}
	used := func(s *Server) int64 {
		return s.limits().plans["count"].used(s.limits().state(key.ID), monthIndex(march2025))
	}
	t.Run("Interleaved", func(t *testing.T) {
		// Each push has two requests counted after the delta was taken and
		// before the totals come back: they must stay for the next push.
		for _, s := range nodes {
			s.Quota = duringPush{st, func() { count(s, 2) }}
		}
		count(nodes[0], 5)
		count(nodes[1], 1)
		for range 3 {
			for _, s := range nodes {
				if err := s.SaveUsage(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
		// 6 counted first, 2 × 2 × 3 during the pushes, of which each
		// node's last two are yet to be pushed: the store has 14, and each
		// node knows the store's count at its last push and its own two.
		got, err := st.LoadUsage(ctx, rappel.UsageMonth(march2025))
		if err != nil || got[key.ID] != 14 {
			t.Fatalf("the store counts %v (%v), want 14", got, err)
		}
		if a, b := used(nodes[0]), used(nodes[1]); a != 12+2 || b != 14+2 {
			t.Fatalf("the nodes count %d and %d, want 14 and 16", a, b)
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		for _, s := range nodes {
			s.Quota = st
		}
		before, err := st.LoadUsage(ctx, rappel.UsageMonth(march2025))
		if err != nil {
			t.Fatal(err)
		}
		const perNode = 500
		var wg sync.WaitGroup
		for _, s := range nodes {
			counting := make(chan struct{})
			wg.Add(2)
			go func() {
				defer wg.Done()
				defer close(counting)
				w := &headerSink{h: http.Header{}}
				for range perNode {
					if err := s.limit(w, key); err != nil {
						t.Error(err)
						return
					}
				}
			}()
			go func() {
				defer wg.Done()
				for {
					select {
					case <-counting:
						return
					default:
					}
					if err := s.SaveUsage(ctx); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		for range 2 {
			for _, s := range nodes {
				if err := s.SaveUsage(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
		// 4 requests of the first subtest were left to push.
		want := before[key.ID] + 4 + 2*perNode
		got, err := st.LoadUsage(ctx, rappel.UsageMonth(march2025))
		if err != nil || got[key.ID] != want {
			t.Fatalf("the store counts %v (%v), want %d", got, err, want)
		}
		if a, b := used(nodes[0]), used(nodes[1]); a != want || b != want {
			t.Fatalf("the nodes count %d and %d, want %d", a, b, want)
		}
	})
}

func TestKeyService_Revoke(t *testing.T) {
	e := mustKeyedEnv(t, "", march2025)
	key := e.issue(t, "tiny")
	if code, _, _ := e.get(t, "/recall/hc-73841", key); code != http.StatusOK {
		t.Fatalf("before revoking: %d", code)
	}
	// Another Keys on the same database, as `rappel keys revoke` is.
	cli := kv.NewKeys(filepath.Join(e.dir, "keys"))
	if _, err := cli.RevokeKey(context.Background(), rappel.KeyID(sha(key)), e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	t.Run("Reload", func(t *testing.T) {
		if err := e.svc.Reload(context.Background()); err != nil {
			t.Fatal(err)
		}
		code, h, detail := e.get(t, "/recall/hc-73841", key)
		if code != http.StatusForbidden || !strings.HasPrefix(detail, "Revoked API key:") || h.Get("RateLimit") != "" {
			t.Fatalf("after revoking: %d %q", code, detail)
		}
	})
	t.Run("Background", func(t *testing.T) {
		svc := NewKeyService(kv.NewKeys(filepath.Join(e.dir, "keys")), nil)
		svc.Refresh = 10 * time.Millisecond
		if err := svc.Open(context.Background()); err != nil {
			t.Fatal(err)
		}
		defer svc.Close()
		fresh, hash := rappel.NewKey()
		if _, err := svc.Authenticate(context.Background(), fresh); rappel.ErrorCode(err) != rappel.EFORBIDDEN {
			t.Fatalf("before adding: %v", err)
		}
		if err := cli.AddKey(context.Background(), hash, &rappel.APIKey{ID: rappel.KeyID(hash), Plan: "tiny"}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, func() bool { _, err := svc.Authenticate(context.Background(), fresh); return err == nil })
		if _, err := cli.RevokeKey(context.Background(), rappel.KeyID(hash), e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		waitFor(t, func() bool {
			_, err := svc.Authenticate(context.Background(), fresh)
			return err != nil && strings.HasPrefix(rappel.ErrorMessage(err), "Revoked API key:")
		})
	})
}

// waitFor polls cond until it holds, failing the test after a generous
// deadline (a deadline for a hung test, not a measured duration).
func waitFor(tb testing.TB, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatal("condition not met in 20 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestKeyService_Authenticate(t *testing.T) {
	e := mustKeyedEnv(t, "", march2025)
	key := e.issue(t, "tiny")
	// Without static keys, a key unlike the issued ones is malformed; with
	// them (the env's --api-keys), it may be one of them mistyped, so it
	// is unknown, and the form of issued keys is a hint.
	issuedOnly := NewKeyService(e.keys, nil)
	if err := issuedOnly.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	const unknown = "Unknown API key: the key in the x-gateway-key header is not valid here, nor in the form of the keys this service issues ("
	for _, tc := range []struct{ key, why string }{
		{"rk_short", "a key issued by this service has 46 characters, this one 8"},
		{"xx" + key[2:], "a key issued by this service starts with rk_"},
		{key[:len(key)-1] + "*", "a key issued by this service holds only letters, digits, - and _ after rk_; character 46 is not one"},
		{strings.Repeat("k", 10000), "a key issued by this service starts with rk_"},
		{"rk_" + strings.Repeat("k", 10000), "a key issued by this service has 46 characters, this one 10003"},
	} {
		for _, c := range []struct {
			svc  *KeyService
			want string
		}{
			{issuedOnly, "Malformed API key: " + tc.why + "; check that the x-gateway-key header holds the whole key."},
			{e.svc, unknown + tc.why + "); check that the header holds the whole key, or get one from the gateway provider."},
		} {
			_, err := c.svc.Authenticate(context.Background(), tc.key)
			if rappel.ErrorCode(err) != rappel.EFORBIDDEN || rappel.ErrorMessage(err) != c.want || strings.Contains(rappel.ErrorMessage(err), tc.key) {
				t.Errorf("key %.20q: %v, want 403 %q", tc.key, err, c.want)
			}
		}
	}
	if _, err := e.svc.Authenticate(context.Background(), "rk_"+strings.Repeat("A", 43)); err != errUnknownKey {
		t.Errorf("a key of the issued form: %v", err)
	}
	a, err := e.svc.Authenticate(context.Background(), key)
	if err != nil || a.Plan != "tiny" || a.ID != rappel.KeyID(sha(key)) {
		t.Fatalf("issued key: %+v, %v", a, err)
	}
	if a, err := e.svc.Authenticate(context.Background(), testKey); err != nil || a.Plan != rappel.PlanDev {
		t.Fatalf("static key: %+v, %v", a, err)
	}
}

// TestKeyService_StaticKeyTypo: a deployment whose --api-keys do not look
// like issued keys tells a client with a mistyped key that it is unknown,
// through the router, and claims no form for the operator's keys.
func TestKeyService_StaticKeyTypo(t *testing.T) {
	for _, store := range []bool{false, true} {
		var ks rappel.KeyStore
		if store {
			ks = kv.NewKeys(filepath.Join(t.TempDir(), "keys"))
		}
		svc := NewKeyService(ks, NewStaticKeys([]string{"dev-secret-2026"}))
		svc.Refresh = 0
		if err := svc.Open(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { svc.Close() })
		s, _ := MustServer(t, MustCatalog(t, testRecords()))
		s.Keys = svc
		base := MustHTTP(t, s.Handler()).URL
		if code, body, _ := do(t, "GET", base+"/recall", "", map[string]string{"x-gateway-key": "dev-secret-2026"}); code != 200 {
			t.Fatalf("the static key: %d %s", code, body)
		}
		for _, typo := range []string{"dev-secret-2062", "dev-secret", "rk_dev-secret-2026"} {
			code, body, _ := do(t, "GET", base+"/recall", "", map[string]string{"x-gateway-key": typo})
			var eb struct{ Detail string }
			json.Unmarshal([]byte(body), &eb)
			if code != 403 || !strings.HasPrefix(eb.Detail, "Unknown API key: the key in the x-gateway-key header is not valid here, nor in the form of the keys this service issues (a key issued by this service ") ||
				strings.Contains(eb.Detail, "Malformed") || strings.Contains(eb.Detail, "a key starts with") || strings.Contains(eb.Detail, typo) {
				t.Errorf("store %v, key %q: %d %s", store, typo, code, body)
			}
		}
	}
}

func TestLimit_UnknownPlan(t *testing.T) {
	e := mustKeyedEnv(t, "", march2025)
	key := e.issue(t, "gold")
	code, _, detail := e.get(t, "/recall/hc-73841", key)
	if code != http.StatusInternalServerError || !strings.Contains(detail, "plan is not configured") {
		t.Fatalf("key of a plan the server lacks: %d %q", code, detail)
	}
}

func TestDefaultPlans(t *testing.T) {
	s := NewServer()
	for _, name := range []string{rappel.PlanFree, rappel.PlanPro} {
		p, ok := s.Plans[name]
		if !ok || p.Rate <= 0 || p.Burst <= 0 || p.Monthly <= 0 {
			t.Errorf("plan %s: %+v", name, p)
		}
	}
}

// BenchmarkAuthenticateLimit measures what every keyed request pays for
// its key: the lookup in the KeyService and the limiter with both the
// bucket and the quota, headers included.
func BenchmarkAuthenticateLimit(b *testing.B) {
	e := mustKeyedEnv(b, "", march2025)
	e.s.Plans = map[string]rappel.Plan{"big": {Name: "big", Rate: 1e9, Burst: 1 << 30, Monthly: 1 << 39}}
	key := e.issue(b, "big")
	r := httptest.NewRequest(http.MethodGet, "/recall/hc-73841", nil)
	r.Header.Set("X-Gateway-Key", key)
	w := &headerSink{h: http.Header{}}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		k, err := e.s.authenticate(r)
		if err != nil {
			b.Fatal(err)
		}
		if err := e.s.limit(w, k); err != nil {
			b.Fatal(err)
		}
	}
}

// headerSink is a ResponseWriter that keeps headers only.
type headerSink struct{ h http.Header }

func (w *headerSink) Header() http.Header         { return w.h }
func (w *headerSink) Write(b []byte) (int, error) { return len(b), nil }
func (w *headerSink) WriteHeader(int)             {}

// BenchmarkGetRecord_IssuedKey is BenchmarkGetRecord with an issued key of
// a limited plan instead of a development key: the difference is what the
// KeyService and the limiter (with their headers) cost a request.
func BenchmarkGetRecord_IssuedKey(b *testing.B) {
	e := mustKeyedEnv(b, "", march2025)
	e.s.Plans = map[string]rappel.Plan{"big": {Name: "big", Rate: 1e9, Burst: 1 << 30, Monthly: 1 << 39}}
	e.s.Logger = slog.New(slog.DiscardHandler)
	key := e.issue(b, "big")
	h := e.s.Handler()
	r := httptest.NewRequest(http.MethodGet, "/recall/hc-73841", nil)
	r.Header.Set("X-Gateway-Key", key)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK || w.Header().Get("RateLimit") == "" {
			b.Fatalf("status %d", w.Code)
		}
	}
}
