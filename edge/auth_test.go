package edge

import (
	"context"
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
)

func sha(s string) [sha256.Size]byte { return sha256.Sum256([]byte(s)) }

func TestStaticKeys_Authenticate(t *testing.T) {
	keys := NewStaticKeys([]string{" rk_one ", "", "rk_two"})
	t.Run("OK", func(t *testing.T) {
		a, err := keys.Authenticate(context.Background(), "rk_one")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := keys.Authenticate(context.Background(), "rk_two")
		if a.ID == b.ID || !strings.HasPrefix(a.ID, "static-") || strings.Contains(a.ID, "rk_one") || a.Plan == "" {
			t.Fatalf("keys %+v and %+v", a, b)
		}
		again, _ := NewStaticKeys([]string{"rk_one"}).Authenticate(context.Background(), "rk_one")
		if again.ID != a.ID {
			t.Fatalf("ID not stable: %s, %s", again.ID, a.ID)
		}
	})
	t.Run("ErrForbidden", func(t *testing.T) {
		for _, k := range []string{"rk_three", "", " rk_one ", "RK_ONE"} {
			_, err := keys.Authenticate(context.Background(), k)
			if rappel.ErrorCode(err) != rappel.EFORBIDDEN || k != "" && strings.Contains(rappel.ErrorMessage(err), k) {
				t.Errorf("key %q: %v", k, err)
			}
		}
	})
	t.Run("Empty", func(t *testing.T) {
		if _, err := NewStaticKeys(nil).Authenticate(context.Background(), "rk_one"); rappel.ErrorCode(err) != rappel.EFORBIDDEN {
			t.Fatalf("got %v", err)
		}
	})
}
