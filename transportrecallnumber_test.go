package rappel

import (
	"strings"
	"testing"
)

func TestTransportRecallNumber(t *testing.T) {
	for _, tc := range []struct {
		texts []string
		want  string
	}{
		{[]string{"https://wwwapps.tc.gc.ca/Saf-Sec-Sur/7/VRDB-BDRV/search-recherche/detail.aspx?lang=eng&rn=2018123"}, "2018123"},
		{[]string{"https://wwwapps.tc.gc.ca/detail.aspx?rn=2018123&amp;lang=fra"}, "2018123"},
		{[]string{"Transport Canada Recall - 2026432 - FORD"}, "2026432"},
		{[]string{"Transport Canada Recall - 2026432"}, "2026432"},
		{[]string{"\u200b Transport&nbsp;Canada Recall&nbsp;- 2026432 -  FORD "}, "2026432"},
		{[]string{"Rappel de Transports Canada - 2026432 - FORD"}, "2026432"},
		{[]string{"Transport Canada recall no. 2026432"}, "2026432"},
		{[]string{"https://recalls-rappels.canada.ca/en/alert-recall/transport-canada-recall-2026432-ford"}, "2026432"},
		{[]string{"/fr/avis-rappel/rappel-de-transports-canada-2026432-ford"}, "2026432"},
		// Texts are tried in order: the first that names a number wins.
		{[]string{"/fr/node/73841", "Transport Canada Recall - 2026432 - FORD"}, "2026432"},
		{[]string{"https://x/detail.aspx?rn=2019001", "Transport Canada Recall - 2026432"}, "2019001"},
		{[]string{"/fr/node/73841"}, ""},
		{[]string{"https://wwwapps.tc.gc.ca/detail.aspx?lang=eng"}, ""},
		{[]string{"https://wwwapps.tc.gc.ca/detail.aspx?lang=eng&rn=ABC"}, ""},
		{[]string{"https://wwwapps.tc.gc.ca/detail.aspx?lang=eng&rn=-1"}, ""},
		{[]string{"https://wwwapps.tc.gc.ca/detail.aspx?lang=eng&urn=2018123"}, ""},
		{[]string{"https://x/?rn=" + strings.Repeat("1", 21)}, ""},
		{[]string{"Transport Canada Recall - FORD"}, ""},
		{[]string{"Ford F-150: brakes"}, ""},
		{nil, ""},
	} {
		if got := TransportRecallNumber(tc.texts...); got != tc.want {
			t.Errorf("TransportRecallNumber(%q) = %q, want %q", tc.texts, got, tc.want)
		}
	}
}

// FuzzTransportRecallNumber: whatever the dump holds, the number is digits
// that make a valid record_id, and one the text holds.
func FuzzTransportRecallNumber(f *testing.F) {
	f.Add("Transport Canada Recall - 2026432 - FORD")
	f.Add("https://wwwapps.tc.gc.ca/detail.aspx?lang=eng&rn=2018123")
	f.Add("/en/alert-recall/transport-canada-recall-2026432-ford")
	f.Add("Rappel de Transports Canada &#8211; 2026432")
	f.Fuzz(func(t *testing.T, s string) {
		n := TransportRecallNumber(s)
		if n == "" {
			return
		}
		if !IsDigits(n) || len(n) > maxRecallDigits || !recordIDPattern.MatchString("tc-"+n) {
			t.Fatalf("TransportRecallNumber(%q) = %q", s, n)
		}
	})
}
