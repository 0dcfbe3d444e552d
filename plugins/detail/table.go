package detail

import (
	"cmp"
	"strings"

	"github.com/rappel-ca/rappel/plugins/guest"
)

// table is an HTML table of a panel: its rows, each a list of its cells'
// HTML.
type table [][]string

// cutTables returns text without its <table> elements, each replaced by a
// line break so that the lines around it stay apart, and the tables. A
// table left open runs to the end of the text. It scans ASCII-lowered text
// (the same length as text, so indexes carry over) rather than parsing
// HTML: notices' tables are flat rows of cells, and a nested table is read
// as rows of the outer one.
func cutTables(text string) (string, []table) {
	if !hasTable(text) {
		return text, nil // most panels: no copy
	}
	low := asciiLower(text)
	start := indexTag(low, "table", 0)
	if start < 0 {
		return text, nil
	}
	var rest strings.Builder
	var tables []table
	for start >= 0 {
		end := len(low)
		next := end
		if i := strings.Index(low[start:], "</table"); i >= 0 {
			end = start + i
			next = end + len("</table")
			if j := strings.IndexByte(low[next:], '>'); j >= 0 {
				next += j + 1
			}
		}
		rest.WriteString(text[:start])
		rest.WriteString("<br>")
		tables = append(tables, rows(text[start:end], low[start:end]))
		text, low = text[next:], low[next:]
		start = indexTag(low, "table", 0)
	}
	rest.WriteString(text)
	return rest.String(), tables
}

// hasTable reports whether text holds "<table", in any case.
func hasTable(text string) bool {
	for i := strings.IndexByte(text, '<'); i >= 0; {
		if len(text)-i > len("<table") && strings.EqualFold(text[i+1:i+len("<table")], "table") {
			return true
		}
		j := strings.IndexByte(text[i+1:], '<')
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

// rows cuts a table's HTML, and its lowered copy, into rows of cells.
func rows(html, low string) table {
	var t table
	for _, r := range cut(html, low, "tr") {
		var cells []string
		for _, c := range cut(r[0], r[1], "td", "th") {
			cells = append(cells, c[0])
		}
		if len(cells) > 0 {
			t = append(t, cells)
		}
	}
	return t
}

// cut returns the parts of html that follow each start tag of one of
// names, each without the tag, as [html, lowered] pairs, up to the next
// such tag.
func cut(html, low string, names ...string) [][2]string {
	var out [][2]string
	at := func(from int) int {
		first := -1
		for _, name := range names {
			if i := indexTag(low, name, from); i >= 0 && (first < 0 || i < first) {
				first = i
			}
		}
		return first
	}
	for i := at(0); i >= 0; {
		body := i + strings.IndexByte(low[i:], '>') + 1
		next := at(body)
		end := next
		if end < 0 {
			end = len(low)
		}
		out = append(out, [2]string{html[body:end], low[body:end]})
		i = next
	}
	return out
}

// indexTag returns the index in low, from from on, of the start tag <name
// (followed by '>', '/' or white space, so that "th" is not "thead"), or -1.
func indexTag(low, name string, from int) int {
	for from < len(low) {
		i := strings.Index(low[from:], "<"+name)
		if i < 0 {
			return -1
		}
		i += from
		after := i + 1 + len(name)
		if after < len(low) && (low[after] == '>' || low[after] == '/' || isRESpace(low[after])) && strings.IndexByte(low[after:], '>') >= 0 {
			return i
		}
		from = i + 1
	}
	return -1
}

// asciiLower is s with ASCII capitals in lower case and every other byte
// as it is: the same length as s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// tableRows reads a product panel's table. A table of two columns whose
// first cells are all product keys is a list of "key | value" rows, which
// fill one product; otherwise its first row is a header naming each column
// and every other row is one product. base holds the panel's own lines,
// which a row's empty cells take. A column whose header is no product key
// is reported, once per document, with unknown.
func (n *notice) tableRows(t table, base productValues, pp productPanel, unknown *unknownKeys) []productValues {
	if len(t) == 0 {
		return nil
	}
	if isKeyValueTable(t) {
		v := base
		for _, r := range t {
			f := productKeys[headerKey(r[0])]
			v[f] = cmp.Or(guest.CleanText(r[1]), v[f])
		}
		return []productValues{v}
	}
	header := make([]productField, len(t[0]))
	known := make([]bool, len(t[0]))
	for i, h := range t[0] {
		header[i], known[i] = productKeys[headerKey(h)]
		if label := guest.CleanText(h); !known[i] && (label != "" || hasData(t[1:], i)) {
			unknown.addColumn(label, i+1, pp.name())
		}
	}
	var out []productValues
	for _, r := range t[1:] {
		v := base
		for i, c := range r {
			if i < len(header) && known[i] {
				v[header[i]] = cmp.Or(guest.CleanText(c), v[header[i]])
			}
		}
		out = append(out, v)
	}
	return out
}

// isKeyValueTable reports whether every row of t is two cells, the first a
// product key.
func isKeyValueTable(t table) bool {
	for _, r := range t {
		if _, ok := productKeys[headerKey(r[0])]; len(r) != 2 || !ok {
			return false
		}
	}
	return true
}

// headerKey is a header cell, or a key cell, in the form productKeys holds.
func headerKey(html string) string {
	return guest.FoldKey(strings.TrimSuffix(strings.TrimSpace(guest.CleanText(html)), ":"))
}

// hasData reports whether a cell of column i of rows has text.
func hasData(rows table, i int) bool {
	for _, r := range rows {
		if i < len(r) && guest.CleanText(r[i]) != "" {
			return true
		}
	}
	return false
}
