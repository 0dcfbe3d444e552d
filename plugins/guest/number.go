package guest

// maxNumberDigits bounds an upstream identifier. Real ones have 4 to 7
// digits; the bound keeps a record_id well inside the 64 characters a
// record_id may have after its source.
const maxNumberDigits = 20

// IsNumber reports whether s is an upstream identifier: a Health Canada NID
// or a Transport Canada recall number, 1 to 20 ASCII digits. Identifiers
// become record_ids, so nothing else may pass.
func IsNumber(s string) bool {
	if s == "" || len(s) > maxNumberDigits {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
