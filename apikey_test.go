package rappel

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

func TestNewKey(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		key, hash := NewKey()
		if err := CheckKey(key); err != nil {
			t.Fatalf("NewKey gave %q, which CheckKey refuses: %v", key, err)
		}
		if hash != sha256.Sum256([]byte(key)) || seen[key] {
			t.Fatalf("key %q: wrong hash or drawn twice", key)
		}
		seen[key] = true
		id := KeyID(hash)
		if len(id) != 2*KeyIDBytes || strings.Contains(key, id) {
			t.Fatalf("ID %q of %q", id, key)
		}
		if got, err := ParseKeyID(strings.ToUpper(id)); err != nil || got != id {
			t.Fatalf("ParseKeyID(%q) = %q, %v", strings.ToUpper(id), got, err)
		}
	}
}

func TestCheckKey(t *testing.T) {
	good, _ := NewKey()
	for _, tc := range []struct {
		key, err string
	}{
		{good, ""},
		{"", "a key issued by this service starts with rk_"},
		{"RK_" + good[3:], "starts with rk_"},
		{good[:45], "46 characters"},
		{good + "A", "46 characters"},
		{good[:10] + "=" + good[11:], "character 11"},
		{good[:10] + "é"[:1] + good[11:], "character 11"},
		// The last character carries 2 bits of padding, which an issued
		// key has at zero: B is 000001.
		{good[:45] + "B", "ends in this key's last character"},
	} {
		err := CheckKey(tc.key)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("CheckKey(%q) = %v, want %q", tc.key, err, tc.err)
		}
	}
}

func TestParseKeyID(t *testing.T) {
	for _, id := range []string{"", "abc", "0123456789ag", "0123456789abcd", " 0123456789ab"} {
		if _, err := ParseKeyID(id); ErrorCode(err) != EINVALID {
			t.Errorf("ParseKeyID(%q) = %v, want EINVALID", id, err)
		}
	}
}

func TestUsageMonth(t *testing.T) {
	// 23:30 in Toronto on March 31 is already April in UTC.
	at := time.Date(2025, 3, 31, 23, 30, 0, 0, time.FixedZone("EDT", -4*3600))
	if got := UsageMonth(at); got != "2025-04" {
		t.Fatalf("got %s", got)
	}
}

// FuzzCheckKey checks that CheckKey accepts exactly the keys NewKey can
// draw: the prefix and the canonical unpadded base64url of 32 bytes.
func FuzzCheckKey(f *testing.F) {
	good, _ := NewKey()
	for _, s := range []string{good, "", "rk_", good[:45] + "B", "rk_" + strings.Repeat("_", 43), good + "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		err := CheckKey(key)
		rest, ok := strings.CutPrefix(key, KeyPrefix)
		b, derr := base64.RawURLEncoding.Strict().DecodeString(rest)
		valid := ok && derr == nil && len(b) == KeyBytes && base64.RawURLEncoding.EncodeToString(b) == rest
		if valid != (err == nil) {
			t.Fatalf("CheckKey(%q) = %v, but the key is valid: %v", key, err, valid)
		}
		if err != nil && len(key) > 4 && strings.Contains(err.Error(), key) {
			t.Fatalf("the error repeats the key: %v", err)
		}
	})
}

// FuzzParseKeyID checks that ParseKeyID accepts exactly twelve hex digits,
// in either case, and returns them in lower case.
func FuzzParseKeyID(f *testing.F) {
	for _, s := range []string{"0123456789ab", "0123456789AB", "", "0123456789abc", "zz23456789ab"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		got, err := ParseKeyID(id)
		valid := len(id) == 2*KeyIDBytes && strings.Trim(strings.ToLower(id), "0123456789abcdef") == ""
		if valid != (err == nil) {
			t.Fatalf("ParseKeyID(%q) = %q, %v; valid: %v", id, got, err, valid)
		}
		if err == nil && got != strings.ToLower(id) {
			t.Fatalf("ParseKeyID(%q) = %q", id, got)
		}
	})
}
