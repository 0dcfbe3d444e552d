package edge

import "fmt"

// splitRecords appends to dst each element of the JSON array of objects
// b. A page's results are the snapshot's own encoding, valid JSON: this
// finds where each record ends by its braces, outside strings, rather
// than by decoding, which took most of an NDJSON export's time. It fails
// on what is not an array of objects.
func splitRecords(dst [][]byte, b []byte) ([][]byte, error) {
	if len(b) == 0 {
		return dst, nil // a page with no results may carry none
	}
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return dst, fmt.Errorf("the results are not a JSON array")
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return dst, trailing(b, i+1)
	}
	for {
		end, err := objectEnd(b, i)
		if err != nil {
			return dst, err
		}
		dst = append(dst, b[i:end])
		i = skipSpace(b, end)
		if i >= len(b) {
			return dst, fmt.Errorf("the results end inside the array")
		}
		switch b[i] {
		case ']':
			return dst, trailing(b, i+1)
		case ',':
			i = skipSpace(b, i+1)
		default:
			return dst, fmt.Errorf("byte %d of the results is %q, not a comma or the array's end", i, b[i])
		}
	}
}

// objectEnd returns the end of the JSON object starting at b[i].
func objectEnd(b []byte, i int) (int, error) {
	if i >= len(b) || b[i] != '{' {
		return 0, fmt.Errorf("byte %d of the results does not start an object", i)
	}
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			j = stringEnd(b, j)
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return j + 1, nil
			}
		}
	}
	return 0, fmt.Errorf("the object at byte %d of the results does not end", i)
}

// stringEnd returns the index of the quote closing the string whose
// opening quote is b[i], or len(b) when it does not close.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return len(b)
}

// skipSpace returns the index of the first byte from i that is not JSON
// white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// trailing fails when anything but white space follows the array.
func trailing(b []byte, i int) error {
	if skipSpace(b, i) != len(b) {
		return fmt.Errorf("the results go on after the array's end")
	}
	return nil
}
