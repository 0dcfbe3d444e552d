package rappel

// UPCAWithoutLeadingZero reads a code printed as 11 digits as the UPC-A it
// most often is: Canadian notices, and the spreadsheets they are made from,
// drop a UPC-A's leading 0 ("64420001412" is 064420001412; see the README's
// "What the agencies publish"). It returns the 12 digits and true when s,
// without the spaces and dashes it may be printed with, is 11 digits and
// "0" followed by them has a valid check digit; otherwise "" and false.
//
// The check digit is what tells the two ways 11 digits arise apart: a code
// whose 0 was dropped checks, while one printed without its check digit
// ("85886000170": 085886000170 fails) checks only by chance, one time in
// ten. Nothing is guessed when it fails: the caller keeps such
// digits as printed, never as a barcode.
func UPCAWithoutLeadingZero(s string) (string, bool) {
	d := StripBarcode(s)
	if len(d) != 11 || !isDigits(d) {
		return "", false
	}
	a := "0" + d
	if checkDigit(a[:11]) != int(a[11]-'0') {
		return "", false
	}
	return a, true
}
