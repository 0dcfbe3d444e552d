package segment

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/rappel-ca/rappel"
)

// bigSegment is a segment whose one section spans several verifyChunks, so
// that a flip in any chunk, and the chunk boundaries, are checked.
func bigSegment(t *testing.T) ([]byte, *header) {
	t.Helper()
	blob := make([]byte, 3*verifyChunk+12345)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range blob {
		blob[i] = byte(r.Uint32())
	}
	b, err := Encode(func(w *Writer) (Meta, error) {
		w.Section("blob", blob)
		return Meta{Info: rappel.DatasetInfo{Records: 1, Source: "test"}, Content: 7}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	h, err := parseHeader("big", b)
	if err != nil {
		t.Fatal(err)
	}
	return b, h
}

// TestOpenChecked_VerifyLater checks that OpenChecked reads a file whose
// sections were damaged (its header and directory intact), and that
// Verify then finds the damage in whichever chunk of a large section it
// lies, names the section, and stops when its context is done.
func TestOpenChecked_VerifyLater(t *testing.T) {
	b, h := bigSegment(t)
	s := h.sections[0]
	path := filepath.Join(t.TempDir(), "big.seg")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := OpenChecked(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Verify(context.Background()); err != nil {
		t.Fatalf("a sound file fails its check: %v", err)
	}
	f.Close()
	for _, at := range []uint64{s.off, s.off + verifyChunk - 1, s.off + verifyChunk, s.off + 2*verifyChunk + 7, s.end() - 1} {
		c := append([]byte(nil), b...)
		c[at] ^= 0x01
		f, err := OpenBytesChecked("flip.seg", c)
		if err != nil {
			t.Fatalf("byte %d flipped: OpenBytesChecked read the sections: %v", at, err)
		}
		checkError(t, f.Verify(context.Background()), "flip.seg", "blob", "checksum")
		if _, err := OpenBytes("flip.seg", c); err == nil {
			t.Fatalf("byte %d flipped: OpenBytes accepted it", at)
		}
	}
	// The header is still checked before anything is read.
	c := append([]byte(nil), b...)
	c[len(magic)+1] ^= 0x01
	if _, err := OpenBytesChecked("flip.seg", c); err == nil {
		t.Fatal("OpenBytesChecked accepted a damaged header")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f, _ = OpenBytesChecked("big.seg", b)
	if err := f.Verify(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Verify with its context done = %v, want context.Canceled", err)
	}
}
