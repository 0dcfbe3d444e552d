package rappel

import (
	"reflect"
	"testing"
)

func TestCoverageOf(t *testing.T) {
	for _, c := range []struct {
		name string
		r    Record
		want CoverageMark
	}{
		{"FoodWithBarcode", Record{Agency: AgencyCFIA, RecallType: TypeFood,
			ProductList: []Product{{Name: "Cheddar", UPC: "0 62639 31285 5"}}}, CoverageMark{true, true, true}},
		{"ElevenDigits", Record{Agency: AgencyCFIA, RecallType: TypeFood,
			ProductList: []Product{{Name: "Cheddar", UPC: "62639312855"}}}, CoverageMark{true, true, true}},
		{"ProductNoCode", Record{Agency: AgencyHealthCanada, RecallType: TypeMedicalDevice,
			ProductList: []Product{{Name: "Pump"}}}, CoverageMark{true, true, false}},
		{"BadCheckDigit", Record{Agency: AgencyCFIA, RecallType: TypeFood,
			ProductList: []Product{{Name: "Cheddar", UPC: "0 62639 31285 4"}}}, CoverageMark{true, true, false}},
		{"PrefixOnly", Record{Agency: AgencyCFIA, RecallType: TypeFood,
			ProductList: []Product{{Name: "Deli", UPCPrefix: "0235278"}}}, CoverageMark{true, true, true}},
		{"RecordUPC", Record{Agency: AgencyHealthCanada, RecallType: TypeConsumerProduct, UPC: "none; 062639312855"}, CoverageMark{true, false, true}},
		{"NoProducts", Record{Agency: AgencyHealthCanada, RecallType: TypeHealthProduct}, CoverageMark{true, false, false}},
		{"Vehicle", Record{Agency: AgencyTransportCanada, RecallType: TypeVehicle}, CoverageMark{}},
		{"VehicleInTheDump", Record{Agency: AgencyHealthCanada, RecallType: TypeVehicle}, CoverageMark{}},
		{"OtherAgency", Record{Agency: "FDA", RecallType: TypeFood, ProductList: []Product{{Name: "x"}}}, CoverageMark{}},
	} {
		if got := CoverageOf(&c.r); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestCoverageTable(t *testing.T) {
	tb := CoverageTable{}
	with := CoverageMark{Notice: true, Products: true, Barcode: true}
	bare := CoverageMark{Notice: true}
	tb.Add(2024, with, 1)
	tb.Add(2024, bare, 1)
	tb.Add(2024, bare, 1)
	tb.Add(2025, CoverageMark{}, 1) // no notice: no year
	tb.Add(2019, bare, 1)
	tb.Add(2019, bare, -1) // taken away: the year is left out
	tb.AddYear(YearCoverage{Year: 2026, Notices: 4, WithProducts: 3, WithBarcode: 1})
	want := []YearCoverage{{2026, 4, 3, 1}, {2024, 3, 1, 1}}
	got := tb.Years()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Years = %+v, want %+v", got, want)
	}
	if s := got[0].ProductsShare(); s != 0.75 {
		t.Errorf("ProductsShare = %v, want 0.75", s)
	}
	if s := (YearCoverage{Year: 2020}).BarcodeShare(); s != 0 {
		t.Errorf("BarcodeShare of no notices = %v, want 0", s)
	}
	many := make([]YearCoverage, CoverageYears+5)
	if n := len(ReportedCoverage(many)); n != CoverageYears {
		t.Errorf("ReportedCoverage kept %d years, want %d", n, CoverageYears)
	}
}
