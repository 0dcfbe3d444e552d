package synth

// field is one value of a dump row: a string, or null.
type field struct {
	v    string
	null bool
}

// The dump's columns, in the order the export writes them.
const (
	colNID = iota
	colTitle
	colURL
	colOrganization
	colProduct
	colIssue
	colWhat
	colCategory
	colClass
	colLastUpdated
	colArchived
	numCols
)

// dumpRow is one object of the Health Canada dump.
type dumpRow [numCols]field

// The dump's keys in English and French (testdata/FORMATS.md).
var (
	dumpKeysEN = [numCols]string{"NID", "Title", "URL", "Organization", "Product", "Issue",
		"What you should do", "Category", "Recall class", "Last updated", "Archived"}
	dumpKeysFR = [numCols]string{"NID", "Titre", "URL", "Organization", "Produit", "Problème",
		"Ce que vous devriez faire", "Catégorie", "Classe de rappel", "Dernière mise à jour", "Archivé"}
)

// appendJSON appends the row as one JSON object with keys.
func (row *dumpRow) appendJSON(b []byte, keys *[numCols]string) []byte {
	b = append(b, '{')
	for i, f := range row {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, keys[i])
		b = append(b, ':')
		if f.null {
			b = append(b, "null"...)
		} else {
			b = appendJSONString(b, f.v)
		}
	}
	return append(b, '}')
}
