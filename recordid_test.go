package rappel

import "testing"

func TestDumpRecordID(t *testing.T) {
	for _, c := range []struct {
		nid     string
		vehicle bool
		texts   []string
		want    string
	}{
		{"77451", false, nil, "hc-77451"},
		{"70001", true, []string{"https://tc.canada.ca/en/recall?rn=2023595"}, "tc-2023595"},
		{"70002", true, []string{"Transport Canada Recall - 2024718 - DIONO"}, "tc-2024718"},
		{"70003", true, []string{"a vehicle notice naming no number"}, "hc-70003"},
		{"70004", false, []string{"Transport Canada Recall - 2024718 - DIONO"}, "hc-70004"},
	} {
		if got := DumpRecordID(c.nid, c.vehicle, c.texts...); got != c.want {
			t.Errorf("DumpRecordID(%q, %v, %q) = %q, want %q", c.nid, c.vehicle, c.texts, got, c.want)
		}
	}
}
