package detail

import (
	"encoding/json"
	"fmt"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest"
)

// categoryList is a document's category: the detail API's numeric codes,
// strings ("1") or numbers, or, in the older shape, category names.
type categoryList []string

func (c *categoryList) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return &shapeError{fmt.Sprintf("its category is %s, not a list of codes or names", truncate(string(b)))}
	}
	*c = (*c)[:0]
	for _, r := range raw {
		var s string
		if err := json.Unmarshal(r, &s); err == nil {
			*c = append(*c, s)
			continue
		}
		var num json.Number
		if err := json.Unmarshal(r, &num); err != nil {
			return &shapeError{fmt.Sprintf("its category holds %s, which is neither a string nor a number", truncate(string(r)))}
		}
		*c = append(*c, num.String())
	}
	return nil
}

// shapeError says in words how a document's field differs from the shape.
type shapeError struct{ reason string }

func (e *shapeError) Error() string { return e.reason }

// sector is what a category code says: the site's section, which becomes
// a category, and the recall type when the section has only one.
type sector struct{ category, recallType string }

// categoryCodes are the detail API's category codes (testdata/FORMATS.md
// gives the evidence). Health products hold the API's health_product,
// medical_device and perhaps cannabis types, and consumer products perhaps
// cannabis too: for those the dump's Organization says which, and the code
// gives none, since the detail, merged first, would win.
var categoryCodes = map[string]sector{
	"1": {"Food", rappel.TypeFood},
	"2": {"Vehicles", rappel.TypeVehicle},
	"3": {"Health products", ""},
	"4": {"Consumer products", ""},
}

// codeList is what a problem offers for an unknown code.
const codeList = "1 (Food), 2 (Vehicles), 3 (Health products) or 4 (Consumer products)"

// categories returns the document's categories, each once, and the recall
// type its codes agree on, if any. A code's section is the parent of the
// categories the document names (its older-shape names, or the Category
// lines of its key/value panels) and comes first, as the site lists a
// notice under Food and Dairy; a code alone says no more than the recall
// type, and gives no categories.
func (n *notice) categories(d *document, file string) ([]string, string) {
	var sections, names []string
	typ, mixed := "", false
	for _, c := range d.Category {
		c = guest.CleanText(c)
		switch s, ok := categoryCodes[c]; {
		case c == "":
		case ok:
			sections = appendNew(sections, s.category)
			// A section of several types, or two sections, say no type.
			mixed = mixed || s.recallType == "" || typ != "" && typ != s.recallType
			typ = s.recallType
		case rappel.IsDigits(c):
			n.problem("The category code %q of %s is none of %s; it was left out.", truncate(c), file, codeList)
		default:
			names = appendNew(names, c)
		}
	}
	for _, name := range keyValuePanels {
		if p := d.panel(name); p != nil {
			for _, kv := range p.pairs() {
				if kv.key == "category" {
					names = appendNew(names, kv.value)
				}
			}
		}
	}
	if mixed {
		typ = ""
	}
	if len(names) == 0 {
		return nil, typ
	}
	for _, name := range names {
		sections = appendNew(sections, name)
	}
	return sections, typ
}
