// Command hog allocates memory without bound, touching every page, and
// keeps all of it.
package main

func main() {
	var keep [][]byte
	for {
		b := make([]byte, 8<<20)
		for i := range b {
			if i%4096 == 0 {
				b[i] = 1
			}
		}
		keep = append(keep, b)
	}
}
