package segment

import (
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/vellum"
)

// Bitmap reads the portable roaring bitmap at the start of b in place and
// checks that it is well formed and holds values below n.
func Bitmap(b []byte, n int) (*roaring.Bitmap, error) {
	bm := roaring.New()
	if _, err := bm.FromBuffer(b); err != nil {
		return nil, err
	}
	if err := bm.Validate(); err != nil {
		return nil, err
	}
	if !bm.IsEmpty() && uint64(bm.Maximum()) >= uint64(n) {
		return nil, fmt.Errorf("it holds %d, past the %d it may hold", bm.Maximum(), n)
	}
	return bm, nil
}

// TrustedBitmap reads a bitmap that Bitmap has checked before, in place.
func TrustedBitmap(b []byte) *roaring.Bitmap {
	bm := roaring.New()
	if _, err := bm.FromBuffer(b); err != nil {
		panic(fmt.Sprintf("segment: a checked bitmap fails to read: %v", err))
	}
	return bm
}

// LoadFST opens a vellum FST over b without copying it, turning a panic
// on malformed bytes into an error.
func LoadFST(b []byte) (fst *vellum.FST, err error) {
	defer func() {
		if r := recover(); r != nil {
			fst, err = nil, fmt.Errorf("malformed: %v", r)
		}
	}()
	return vellum.Load(b)
}

// FSTGet looks key up in fst, which was loaded from bytes whose checksum
// was verified but whose structure vellum does not check: it indexes the
// bytes as they say, so a malformed dictionary is an error, not a panic.
func FSTGet(fst *vellum.FST, key []byte) (val uint64, found bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			val, found, err = 0, false, fmt.Errorf("malformed: %v", r)
		}
	}()
	return fst.Get(key)
}

// Bitmap reads a bitmap of the reader's file that may hold documents
// below n: checked as Bitmap does, or, in a file opened prechecked
// (File.Prechecked), only read, since the same bytes were checked when
// the file was first opened.
func (r *Reader) Bitmap(b []byte, n int) (*roaring.Bitmap, error) {
	if !r.f.prechecked {
		return Bitmap(b, n)
	}
	bm := roaring.New()
	if _, err := bm.FromBuffer(b); err != nil {
		return nil, err
	}
	return bm, nil
}
