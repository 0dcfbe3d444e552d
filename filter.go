package rappel

// FilterValues are the values of a search's filters, "" for a filter not
// set: those of GET /recall, of a subscription's saved search and of a
// webhook's alike. Filters says how each is named and matched; code that
// handles every filter walks Filters instead of naming these fields, so
// that adding a filter is an entry there and a field here
// (CONTRIBUTING.md, "A new filter").
//
// The JSON names are those of a saved search as stored: the field order
// is kept so that stored searches encode as they always have.
type FilterValues struct {
	Agency      string `json:"agency,omitempty"`
	RecallType  string `json:"recall_type,omitempty"`
	HazardClass string `json:"hazard_class,omitempty"`
	Allergen    string `json:"allergen,omitempty"`
	// Category is free text, compared with case and accents folded; a
	// subscription's saved search leaves it empty (Filter.InAlerts).
	Category string `json:"category,omitempty"`
	// Status is the record's status, active or archived; a subscription's
	// saved search leaves it empty: the recalls it is sent are new.
	Status string `json:"status,omitempty"`
}

// Filter is one filter of GET /recall: how a request names it, which
// record values it matches and where a search holds its value.
type Filter struct {
	// Param names it in GET /recall's query, in a webhook's body and
	// view, and as a facet of GET /recall.
	Param string
	// Field names it in a subscription's body and saved search, as a
	// group_by of GET /recall/stats (whose groups count what the filter
	// matches) and in the index.
	Field string
	// Vocab returns the values it accepts, refusing others with a 422
	// naming the nearest; nil for a free-text filter (Free).
	Vocab func() Vocabulary
	// MaxBytes bounds a value in a request body.
	MaxBytes int
	// InAlerts is whether a subscription's saved search takes it.
	InAlerts bool
	// Values returns the values of r the filter is matched against: r
	// matches when one of them is the filter's value (for a free-text
	// filter, in the index's folded form).
	Values func(r *Record) []string
	// Of returns where fv holds the filter's value.
	Of func(fv *FilterValues) *string
}

// Free reports whether the filter takes free text rather than a
// vocabulary: its values are compared with case and accents folded, and
// one no record holds is refused with a 422 naming the nearest (GET
// /recall's category).
func (f *Filter) Free() bool { return f.Vocab == nil }

// Filters are the filters of GET /recall, in the order its query
// parameters are listed; a cursor hashes their values in this order, so a
// filter is added at the end. The edge reads its query parameters and request bodies from this
// table, the index builds a bitmap per value from Values and matches,
// pages, counts and facets through it, and the alert matcher holds a
// saved search against a new record with it; the OpenAPI document's
// parameters are checked against it by edge's tests.
var Filters = []Filter{
	{Param: "category", Field: "category", MaxBytes: 200,
		Values: (*Record).CategoryNames,
		Of:     func(fv *FilterValues) *string { return &fv.Category }},
	{Param: "recall_type", Field: "recall_type", Vocab: vocab(RecallTypes), MaxBytes: 64, InAlerts: true,
		Values: func(r *Record) []string { return one(r.RecallType) },
		Of:     func(fv *FilterValues) *string { return &fv.RecallType }},
	{Param: "recall_agency", Field: "agency", Vocab: KnownAgencies, MaxBytes: 64, InAlerts: true,
		Values: func(r *Record) []string { return one(r.Agency) },
		Of:     func(fv *FilterValues) *string { return &fv.Agency }},
	{Param: "hazard_class", Field: "hazard_class", Vocab: vocab(HazardClasses), MaxBytes: 64, InAlerts: true,
		Values: func(r *Record) []string { return one(r.HazardClass) },
		Of:     func(fv *FilterValues) *string { return &fv.HazardClass }},
	{Param: "allergen", Field: "allergen", Vocab: vocab(Allergens), MaxBytes: 64, InAlerts: true,
		Values: func(r *Record) []string { return r.Allergens },
		Of:     func(fv *FilterValues) *string { return &fv.Allergen }},
	{Param: "recall_status", Field: "status", Vocab: vocab(Statuses), MaxBytes: 64,
		Values: func(r *Record) []string { return one(r.Status) },
		Of:     func(fv *FilterValues) *string { return &fv.Status }},
}

// FilterParams are the Param of every filter, in Filters' order.
func FilterParams() []string {
	names := make([]string, len(Filters))
	for i := range Filters {
		names[i] = Filters[i].Param
	}
	return names
}

// CategoryNames are the names the category filter matches r by: its
// category, the categories it also belongs to, and its French category.
func (r *Record) CategoryNames() []string {
	cats := append([]string{r.Category}, r.Categories...)
	if tr := r.Translations.FR; tr != nil {
		cats = append(cats, tr.Category)
	}
	return cats
}

// one is v as the values of a scalar field: none when it is empty.
func one(v string) []string {
	if v == "" {
		return nil
	}
	return []string{v}
}

// vocab returns a Filter.Vocab of a fixed vocabulary.
func vocab(v Vocabulary) func() Vocabulary { return func() Vocabulary { return v } }
