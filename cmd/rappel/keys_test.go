package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/kvtest"
	"github.com/rappel-ca/rappel/kv/postgres/pgtest"
)

// keys runs `rappel keys args...` on dataDir and returns its output.
func keys(tb testing.TB, dataDir string, args ...string) (string, error) {
	tb.Helper()
	c := NewKeysCommand()
	var out bytes.Buffer
	c.Stdout = &out
	if err := c.ParseFlags(append(args, "--data-dir", dataDir)); err != nil {
		return "", err
	}
	err := c.Run(context.Background())
	return out.String(), err
}

// mustKeys is keys that fails the test on error.
func mustKeys(tb testing.TB, dataDir string, args ...string) string {
	tb.Helper()
	out, err := keys(tb, dataDir, args...)
	if err != nil {
		tb.Fatalf("rappel keys %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// mustDataDir returns a data dir whose store holds one record, so that
// serve starts without a bundle.
func mustDataDir(tb testing.TB) (dir, recordID string) {
	tb.Helper()
	dir = tb.TempDir()
	st := kvtest.OpenAt(tb, filepath.Join(dir, "pebble"))
	rec := &rappel.Record{
		RecordID: "tc-2025123", RecallID: "2025123", RecallType: rappel.TypeVehicle,
		Agency: rappel.AgencyTransportCanada, Status: rappel.StatusActive,
		EventDate: "2025-01-15", RecallDate: "2025-01-15", FetchedAt: "2025-03-04T10:00:00Z",
		VehicleMake: "HONDA", VehicleModel: "CIVIC",
		Translations: rappel.Translations{EN: &rappel.Translation{Title: "Honda Civic: front passenger airbag"}},
	}
	if err := st.PutRecords(context.Background(), []*rappel.Record{rec}); err != nil {
		tb.Fatal(err)
	}
	if err := st.SetDatasetInfo(context.Background(), rappel.DatasetInfo{UpdatedAt: time.Now().UTC(), Source: "bundle", Records: 1}); err != nil {
		tb.Fatal(err)
	}
	if err := st.Close(); err != nil {
		tb.Fatal(err)
	}
	return dir, rec.RecordID
}

// getHeaders is get returning the response headers too.
func getHeaders(tb testing.TB, url, key string) (int, http.Header, string) {
	tb.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("x-gateway-key", key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

var monthlyLeft = regexp.MustCompile(`"monthly";r=(\d+);`)

func TestKeys_AgainstServer(t *testing.T) {
	dir, id := mustDataDir(t)
	out := mustKeys(t, dir, "add", "--plan", "free", "--label", "Acme Inc.")
	key, rest, _ := strings.Cut(out, "\n")
	if err := rappel.CheckKey(key); err != nil {
		t.Fatalf("add printed %q first: %v", key, err)
	}
	keyID := rappel.KeyID(sha256Sum(key))
	if !strings.Contains(rest, "id "+keyID+", plan free") || !strings.Contains(rest, "shown only this once") {
		t.Fatalf("add printed %q", out)
	}

	c := NewServeCommand()
	c.DataDir, c.Bundle = dir, os.DirFS(t.TempDir())
	base, stop := serve(t, c)
	code, h, body := getHeaders(t, base+"/recall/"+id, key)
	if code != http.StatusOK {
		t.Fatalf("the printed key: %d %s", code, body)
	}
	if got := h.Get("RateLimit-Policy"); !strings.HasPrefix(got, `"burst";q=20;w=4, "monthly";q=100000;w=`) {
		t.Fatalf("RateLimit-Policy %q: not the free plan", got)
	}
	if got := h.Get("RateLimit"); !strings.HasPrefix(got, `"burst";r=19;t=1, "monthly";r=99999;t=`) {
		t.Fatalf("RateLimit %q", got)
	}

	t.Run("List", func(t *testing.T) {
		out := mustKeys(t, dir, "list")
		if strings.Contains(out, key) || strings.Contains(out, key[3:20]) {
			t.Fatalf("list shows the key:\n%s", out)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "ID") || !regexp.MustCompile(`^`+keyID+` +free +\d{4}-\d\d-\d\dT[\d:]+Z +- +Acme Inc\.$`).MatchString(lines[1]) {
			t.Fatalf("list:\n%s", out)
		}
	})

	t.Run("AddWhileServing", func(t *testing.T) {
		out := mustKeys(t, dir, "add", "--plan", "pro", "--label", "second")
		second, _, _ := strings.Cut(out, "\n")
		waitUntil(t, func() bool {
			code, h, _ := getHeaders(t, base+"/recall/"+id, second)
			return code == http.StatusOK && strings.HasPrefix(h.Get("RateLimit-Policy"), `"burst";q=200;w=4,`)
		})
	})

	t.Run("RevokeWhileServing", func(t *testing.T) {
		out := mustKeys(t, dir, "revoke", strings.ToUpper(keyID))
		if !strings.HasPrefix(out, "revoked "+keyID+" (plan free, label \"Acme Inc.\")") {
			t.Fatalf("revoke printed %q", out)
		}
		waitUntil(t, func() bool {
			code, h, body := getHeaders(t, base+"/recall/"+id, key)
			return code == http.StatusForbidden && strings.Contains(body, "Revoked API key") && h.Get("RateLimit") == ""
		})
		if out := mustKeys(t, dir, "list"); !regexp.MustCompile(keyID + ` +free +\S+ +\d{4}-\d\d-\d\dT[\d:]+Z +Acme`).MatchString(out) {
			t.Fatalf("list after revoking:\n%s", out)
		}
	})

	t.Run("UsageSurvivesRestart", func(t *testing.T) {
		out := mustKeys(t, dir, "add", "--plan", "free", "--label", "third")
		third, _, _ := strings.Cut(out, "\n")
		var before string
		waitUntil(t, func() bool {
			code, h, _ := getHeaders(t, base+"/recall/"+id, third)
			before = h.Get("RateLimit")
			return code == http.StatusOK
		})
		stop()
		c2 := NewServeCommand()
		c2.DataDir, c2.Bundle = dir, os.DirFS(t.TempDir())
		base2, _ := serve(t, c2)
		_, h, _ := getHeaders(t, base2+"/recall/"+id, third)
		b, a := monthlyLeft.FindStringSubmatch(before), monthlyLeft.FindStringSubmatch(h.Get("RateLimit"))
		if b == nil || a == nil || b[1] != "99999" || a[1] != "99998" {
			t.Fatalf("monthly left before the restart %q, after %q; want one less", before, h.Get("RateLimit"))
		}
	})
}

// waitUntil polls cond until it holds; the deadline only bounds a hung
// test, the server's key refresh is 2 s.
func waitUntil(tb testing.TB, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatal("condition not met in 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestKeys_Errors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"add", "--plan", "gold", "--label", "x"}, `--plan is "gold"; give free or pro`},
		{[]string{"add", "--plan", "free"}, "--label is empty"},
		{[]string{"add", "--plan", "free", "--label", "a\nb"}, "control character"},
		{[]string{"revoke"}, "revoke needs the key's ID"},
		{[]string{"revoke", "xyz"}, "A key ID is 12 hexadecimal digits"},
		{[]string{"revoke", "0123456789ab"}, "No key has ID 0123456789ab"},
		{[]string{"rotate"}, `unknown keys action "rotate"`},
	} {
		_, err := keys(t, dir, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("keys %s: %v, want %q", strings.Join(tc.args, " "), err, tc.err)
		}
	}
	if out := mustKeys(t, dir, "list"); strings.Count(out, "\n") != 1 {
		t.Errorf("list of no keys:\n%s", out)
	}
}

// TestKeys_SharedStore issues, lists and revokes keys in a fleet's shared
// store, with two nodes serving from it: a key issued once works on both,
// and its revocation reaches both.
func TestKeys_SharedStore(t *testing.T) {
	dsn := pgtest.DSN(t)
	unused := filepath.Join(t.TempDir(), "unused")
	shared := func(args ...string) string {
		t.Helper()
		return mustKeys(t, unused, append(args, "--shared-store", dsn)...)
	}
	out := shared("add", "--plan", "free", "--label", "fleet")
	key, _, _ := strings.Cut(out, "\n")
	if err := rappel.CheckKey(key); err != nil {
		t.Fatalf("add printed %q: %v", out, err)
	}
	keyID := rappel.KeyID(sha256Sum(key))
	if _, err := os.Stat(unused); !os.IsNotExist(err) {
		t.Fatalf("keys with --shared-store touched the data dir: %v", err)
	}
	if out := shared("list"); !regexp.MustCompile(`(?m)^` + keyID + ` +free +\S+ +- +fleet$`).MatchString(out) {
		t.Fatalf("list:\n%s", out)
	}
	var bases []string
	var id string
	for range 2 {
		dir, recordID := mustDataDir(t)
		c := NewServeCommand()
		c.DataDir, c.Bundle, c.SharedStore = dir, os.DirFS(t.TempDir()), dsn
		base, _ := serve(t, c)
		bases, id = append(bases, base), recordID
	}
	for i, base := range bases {
		if code, _, body := getHeaders(t, base+"/recall/"+id, key); code != http.StatusOK {
			t.Fatalf("node %d with the shared key: %d %s", i, code, body)
		}
	}
	if out := shared("revoke", keyID); !strings.HasPrefix(out, "revoked "+keyID) {
		t.Fatalf("revoke printed %q", out)
	}
	for _, base := range bases {
		waitUntil(t, func() bool {
			code, _, body := getHeaders(t, base+"/recall/"+id, key)
			return code == http.StatusForbidden && strings.Contains(body, "Revoked API key")
		})
	}
	if _, err := keys(t, unused, "revoke", "0123456789ab", "--shared-store", dsn); err == nil || !strings.Contains(err.Error(), "No key has ID 0123456789ab") {
		t.Fatalf("revoking an unknown ID: %v", err)
	}
}

func TestKeys_SharedStoreErrors(t *testing.T) {
	_, err := keys(t, t.TempDir(), "list", "--shared-store", "mysql://root:hunter2@db/rappel")
	if err == nil || !strings.Contains(err.Error(), "--shared-store is not a postgres:// URL") || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("a MySQL URL: %v", err)
	}
	// A schema migrated by a newer rappel is refused, by keys and serve.
	dsn := pgtest.DSN(t)
	mustKeys(t, t.TempDir(), "list", "--shared-store", dsn)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `UPDATE schema_version SET version = 99`); err != nil {
		t.Fatal(err)
	}
	_, err = keys(t, t.TempDir(), "list", "--shared-store", dsn)
	if err == nil || !strings.Contains(err.Error(), "the shared store's schema is version 99, newer than this rappel knows") {
		t.Fatalf("keys on a newer schema: %v", err)
	}
	dir, _ := mustDataDir(t)
	c := NewServeCommand()
	c.DataDir, c.Bundle, c.SharedStore, c.Addr = dir, os.DirFS(t.TempDir()), dsn, "127.0.0.1:0"
	c.Logger = slog.New(slog.DiscardHandler)
	err = c.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "upgrade rappel") {
		t.Fatalf("serve on a newer schema: %v", err)
	}
}

func sha256Sum(key string) [32]byte { return sha256.Sum256([]byte(key)) }
