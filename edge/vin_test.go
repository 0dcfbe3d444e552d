package edge

import (
	"bufio"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv"
)

// Real VINs from testdata/vin/real.tsv.
const (
	camryVIN  = "4T1BB3EK5AU118081" // TOYOTA CAMRY 2010
	sonataVIN = "5NPEB4AC9DH571382" // HYUNDAI SONATA 2013: no recall names the model
	pickupVIN = "1N6SD16S6NC347945" // NISSAN PICKUP 1992
)

// nissanVIN is made up: a Nissan of 1992 (JN1, year N) whose VDS names no
// model the decoder knows.
const nissanVIN = "JN1HZ14S6NX000001"

// ladaVIN is made up: an AvtoVAZ Lada (XTA, Russia) of 2018 whose position
// 9 is no check digit, as ISO 3779 allows outside North America.
const ladaVIN = "XTAGFL120JY000001"

func (e *lookupEnv) vin(tb testing.TB, vin string, more ...string) vinBody {
	tb.Helper()
	v := url.Values{"vin": {vin}}
	for i := 0; i+1 < len(more); i += 2 {
		v.Set(more[i], more[i+1])
	}
	var b vinBody
	e.ok(tb, "/recall/vin?"+v.Encode(), &b)
	if b.Count != len(b.Results) || b.Results == nil {
		tb.Errorf("vin %q: count %d, results %v", vin, b.Count, b.Results)
	}
	if b.CheckDigit != "valid" && b.CheckDigit != "not_verified" {
		tb.Errorf("vin %q: check_digit %q", vin, b.CheckDigit)
	}
	return b
}

// vinBody is a GET /recall/vin body, loosely decoded.
type vinBody struct {
	foundBody
	CheckDigit string `json:"check_digit"`
}

// withVINCheck returns vin with its check digit (position 9) made right.
func withVINCheck(vin string) string {
	return vin[:8] + string(rappel.VINCheckDigit(vin)) + vin[9:]
}

func decodedString(b vinBody) string {
	s := func(p *string) string {
		if p == nil {
			return "null"
		}
		return *p
	}
	y := "null"
	if b.Decoded.Year != nil {
		y = strconv.Itoa(*b.Decoded.Year)
	}
	return s(b.Decoded.Make) + "/" + s(b.Decoded.Model) + "/" + y
}

func TestVIN(t *testing.T) {
	e := mustLookupEnv(t, append(lookupRecords(), statsRecords(50, 3)...))

	t.Run("MakeModelYear", func(t *testing.T) {
		for _, form := range []string{camryVIN, strings.ToLower(camryVIN), "4T1-BB3EK5-AU118081", " 4t1 bb3ek5au118081 "} {
			b := e.vin(t, form)
			// tc-2026901 (2026-09-14) then tc-2025902 (2025-03-02); not the
			// consumer product naming a Toyota Camry, nor the Corolla.
			if b.VIN != camryVIN || b.CheckDigit != "valid" || decodedString(b) != "TOYOTA/CAMRY/2010" ||
				!slices.Equal(b.ids(), []string{"tc-2026901", "tc-2025902"}) {
				t.Fatalf("vin %q: %+v", form, b)
			}
			for _, r := range b.Results {
				if r.Match != "make_model_year" || r.RecallType != "vehicle" || r.Title != nil {
					t.Errorf("vin %q: result %+v", form, r)
				}
			}
			if r := b.Results[0]; r.RecallID != "2026901" || r.TitleEN != "Toyota Camry (2010-2011): passenger air bag may not deploy" {
				t.Errorf("vin %q: first result %+v", form, r)
			}
		}
	})
	t.Run("MakeYearWhenNoModelHit", func(t *testing.T) {
		b := e.vin(t, sonataVIN)
		if decodedString(b) != "HYUNDAI/SONATA/2013" || !slices.Equal(b.ids(), []string{"tc-2026903"}) || b.Results[0].Match != "make_year" {
			t.Errorf("%+v", b)
		}
	})
	t.Run("MakeYearWhenNoModel", func(t *testing.T) {
		b := e.vin(t, nissanVIN, "lang", "fr")
		if decodedString(b) != "NISSAN/null/1992" || !slices.Equal(b.ids(), []string{"tc-1993904"}) {
			t.Fatalf("%+v", b)
		}
		if r := b.Results[0]; r.Match != "make_year" || r.Title == nil || *r.Title != "Nissan Pickup (1992): fuel line (FR)" {
			t.Errorf("%+v", r)
		}
	})
	t.Run("MakeModelYearOld", func(t *testing.T) {
		b := e.vin(t, pickupVIN, "lang", "fr")
		if decodedString(b) != "NISSAN/PICKUP/1992" || !slices.Equal(b.ids(), []string{"tc-1993904"}) || b.Results[0].Match != "make_model_year" {
			t.Errorf("%+v", b)
		}
	})
	t.Run("NoHit", func(t *testing.T) {
		b := e.vin(t, "2C3CCACG6CH275007") // CHRYSLER 300 2012
		if decodedString(b) != "CHRYSLER/300/2012" || b.Count != 0 {
			t.Errorf("%+v", b)
		}
	})
	t.Run("UnknownMake", func(t *testing.T) {
		b := e.vin(t, withVINCheck("9ZZAB12C0DM123456"))
		if b.Decoded.Make != nil || b.Decoded.Model != nil || b.Count != 0 {
			t.Errorf("%+v", b)
		}
	})
	t.Run("UnknownYear", func(t *testing.T) {
		v := withVINCheck(camryVIN[:9] + "U" + camryVIN[10:]) // U is never a year code
		b := e.vin(t, v)
		if decodedString(b) != "TOYOTA/null/null" && decodedString(b) != "TOYOTA/CAMRY/null" || b.Count != 0 {
			t.Errorf("%s: %+v", v, b)
		}
	})

	// Outside North America position 9 need not be a check digit: the VIN
	// is accepted and the answer says the check digit was not verified;
	// one that adds up is valid wherever the VIN comes from.
	t.Run("CheckDigitNotVerified", func(t *testing.T) {
		for _, form := range []string{ladaVIN, strings.ToLower(ladaVIN), "XTA-GFL120-JY000001"} {
			b := e.vin(t, form)
			if b.VIN != ladaVIN || b.CheckDigit != "not_verified" || decodedString(b) != "LADA/VESTA/2018" || b.Count != 0 {
				t.Errorf("vin %q: %+v", form, b)
			}
		}
		fixed := withVINCheck(ladaVIN)
		if b := e.vin(t, fixed); b.VIN != fixed || b.CheckDigit != "valid" || decodedString(b) != "LADA/VESTA/2018" {
			t.Errorf("vin %q: %+v", fixed, b)
		}
		// Europe (Z in position 9, as Volkswagen writes it there), Japan
		// and Korea alike.
		for _, vin := range []string{"WVWZZZ1KZ6W000001", "JHMCM82603A004352", "KMHDU41BX9U000001"} {
			if b := e.vin(t, vin); b.CheckDigit != "not_verified" || b.Decoded.Make == nil {
				t.Errorf("vin %q: %+v, want a make and check_digit not_verified", vin, b)
			}
		}
	})

	t.Run("Invalid", func(t *testing.T) {
		bad := camryVIN[:8] + "9" + camryVIN[9:]
		for _, tc := range []struct{ vin, says string }{
			{camryVIN[:16], "has 16 characters but a VIN has exactly 17"},
			{camryVIN + "1", "has 18 characters"},
			{bad, "check digit of VIN " + bad + " (position 9) is 9 but should be 5"},
			// North America (1-5, and 7F-70 in the United States) keeps
			// the check digit mandatory.
			{"2HGCM82643A004352", "check digit of VIN 2HGCM82643A004352 (position 9) is 4 but should be"},
			{"3VWCM82643A004352", "(position 9) is 4 but should be"},
			{"7SAYGDEE0NF000001", "(position 9) is 0 but should be"},
			{"4T1BB3EK5AU11808I", "letter I at position 17"},
			{"4T1BB3EK5OU118081", "letter O at position 10"},
			{"4T1BB3EK5AU1180_1", "'_' at position 16"},
			{"4T1BB3EK5AU11808é", "'é' at position 17"},
			{"", "is empty"},
			{" - ", "is empty"},
		} {
			items := e.invalid(t, "/recall/vin?"+url.Values{"vin": {tc.vin}}.Encode())
			it := items[0]
			if it.Type != "value_error" || it.Loc[1] != "vin" || it.Input != tc.vin ||
				!strings.HasPrefix(it.Msg, "Query parameter 'vin' is not a valid VIN: ") || !strings.Contains(it.Msg, tc.says) {
				t.Errorf("vin %q: %+v; want it to say %q", tc.vin, it, tc.says)
			}
		}
		for query, typ := range map[string]string{"": "missing", "vin=" + camryVIN + "&lang=EN": "enum", "vn=" + camryVIN: "extra_forbidden"} {
			if items := e.invalid(t, "/recall/vin?"+query); items[0].Type != typ {
				t.Errorf("%q: %+v, want %s", query, items, typ)
			}
		}
	})

	// The decoder's table of real VINs, through the endpoint: make and
	// year exactly as the source gives them, a model only when it is the
	// source's.
	t.Run("RealVINs", func(t *testing.T) {
		rows := realVINs(t)
		models := 0
		for _, row := range rows {
			b := e.vin(t, row.vin)
			if b.Decoded.Make == nil || *b.Decoded.Make != row.make || b.Decoded.Year == nil || *b.Decoded.Year != row.year {
				t.Errorf("%s: decoded %s, want %s/%s/%d", row.vin, decodedString(b), row.make, row.model, row.year)
			}
			if m := b.Decoded.Model; m != nil {
				models++
				if row.model != "" && *m != row.model {
					t.Errorf("%s: model %s, want %s", row.vin, *m, row.model)
				}
			}
		}
		if models*2 < len(rows) {
			t.Errorf("models decoded for %d of %d VINs", models, len(rows))
		}
	})
}

type realVIN struct {
	vin, make, model string
	year             int
}

// realVINs reads testdata/vin/real.tsv.
func realVINs(tb testing.TB) []realVIN {
	f, err := os.Open("../testdata/vin/real.tsv")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var rows []realVIN
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		c := strings.Split(sc.Text(), "\t")
		if len(c) < 4 {
			continue
		}
		y, err := strconv.Atoi(c[3])
		if err != nil {
			tb.Fatalf("real.tsv: %q: %v", sc.Text(), err)
		}
		rows = append(rows, realVIN{c[0], c[1], c[2], y})
	}
	if err := sc.Err(); err != nil || len(rows) < 100 {
		tb.Fatalf("real.tsv: %d rows, %v", len(rows), err)
	}
	return rows
}

// TestVIN_Bundle looks up every real VIN against the real data: the
// recalls found are exactly the vehicle recalls whose affected models
// cover the decoded make, model and year (or make and year).
func TestVIN_Bundle(t *testing.T) {
	recs := bundleRecords(t)
	e := mustLookupEnv(t, recs)
	hits := 0
	for _, row := range realVINs(t) {
		b := e.vin(t, row.vin)
		if b.Decoded.Make == nil || b.Decoded.Year == nil {
			t.Fatalf("%s: %+v", row.vin, b)
		}
		model, match := "", "make_year"
		if b.Decoded.Model != nil {
			model, match = *b.Decoded.Model, "make_model_year"
		}
		want := coveredBy(recs, *b.Decoded.Make, model, *b.Decoded.Year)
		if len(want) == 0 && model != "" {
			model, match = "", "make_year"
			want = coveredBy(recs, *b.Decoded.Make, "", *b.Decoded.Year)
		}
		got := b.ids()
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s (%s): found %d records, want %d", row.vin, decodedString(b), len(got), len(want))
		}
		for _, r := range b.Results {
			if r.Match != match {
				t.Errorf("%s: match %q, want %q", row.vin, r.Match, match)
			}
		}
		if match == "make_model_year" {
			hits++
		}
	}
	if hits < 50 {
		t.Errorf("only %d real VINs matched make, model and year in the bundle", hits)
	}
}

// coveredBy returns the sorted ids of the vehicle recalls whose affected
// models cover make, model (any when "") and year.
func coveredBy(recs []*rappel.Record, make, model string, year int) []string {
	var ids []string
	for _, r := range recs {
		if r.RecallType != rappel.TypeVehicle {
			continue
		}
		for _, m := range r.AffectedModels {
			if kv.NormalizeVehicle(m.Make) == kv.NormalizeVehicle(make) && m.Year == year &&
				(model == "" || kv.NormalizeVehicle(m.Model) == kv.NormalizeVehicle(model)) {
				ids = append(ids, r.RecordID)
				break
			}
		}
	}
	slices.Sort(ids)
	return ids
}
