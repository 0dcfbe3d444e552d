package guest

import (
	"fmt"
	"time"
)

// dateLayouts are the spellings the upstream feeds use for a date: the Health
// Canada dump writes the first two, the Transport Canada CSV all three.
var dateLayouts = []string{time.DateOnly, time.DateTime, "2006/01/02"}

// ParseDate reads an upstream date (already cleaned, see CleanText) and
// returns it as YYYY-MM-DD. A time of day is dropped: the records carry
// dates only, and the feeds' times are local midnights or noise.
func ParseDate(s string) (string, error) {
	for _, layout := range dateLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.Format(time.DateOnly), nil
		}
	}
	return "", fmt.Errorf("%q is not a date written YYYY-MM-DD, YYYY-MM-DD HH:MM:SS or YYYY/MM/DD", s)
}
