package feeds

import (
	"fmt"
	"testing"
	"testing/fstest"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/hcdump"
)

// TestHCDump_SplitAgreesWithNormalizer checks that splitting the dump names
// every record the normalizer makes of it, for the hand-checked sample and
// for every shape of testdata/hc-shapes and the 2023 vocabulary of
// testdata/hc-2023 (Organization "Transport Canada", or one the dump never
// used, typed by rule): a Transport Canada row whose
// recall number is only in its title ("Transport Canada Recall - 2017500 -
// CHEVROLET") is tc-2017500 for both, so that its detail documents are not
// fetched and removing the row removes that record.
func TestHCDump_SplitAgreesWithNormalizer(t *testing.T) {
	for _, dir := range []string{"hc", "hc-shapes", "hc-2023"} {
		t.Run(dir, func(t *testing.T) {
			docs := readDocs(t, dir, hcFileEN, hcFileFR)
			recs, err := hcdumpFormat{}.split(docs)
			if err != nil {
				t.Fatal(err)
			}
			named := map[string]string{}
			for _, r := range recs {
				for _, id := range r.IDs {
					named[id] = r.Key
				}
			}
			fsys := fstest.MapFS{}
			for name, b := range docs {
				fsys[name] = &fstest.MapFile{Data: b}
			}
			n := 0
			err = hcdump.Normalize(fsys, func(r *rappel.Record) error {
				n++
				if _, ok := named[r.RecordID]; !ok {
					return fmt.Errorf("the normalizer made %s, which no raw record names", r.RecordID)
				}
				return nil
			}, func(rappel.Problem) {})
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				t.Fatal("no records")
			}
		})
	}
	var recs []rappel.RawRecord
	for _, dir := range []string{"hc-shapes", "hc-2023"} {
		r, err := hcdumpFormat{}.split(readDocs(t, dir, hcFileEN, hcFileFR))
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r...)
	}
	for _, r := range recs {
		want, ok := map[string]string{"72101": "tc-2017500", "72102": "tc-2019045", "72103": "hc-72103", "72001": "hc-72001",
			"72106": "tc-2020311", "68201": "tc-2023401", "68202": "tc-2022187", "68301": "hc-68301"}[r.Key]
		if !ok {
			continue
		}
		if len(r.IDs) != 1 || r.IDs[0] != want || wantsDetail(r) != (want[:3] == "hc-") {
			t.Errorf("NID %s: ids %v, wants detail %v; want %s", r.Key, r.IDs, wantsDetail(r), want)
		}
	}
}
