package rappel

import "context"

// Lookup finds records by the exact keys of the durable store's secondary
// index: barcodes, barcode prefixes and vehicles. Both methods return record ids in record_id
// order, nil when nothing matches, honour ctx cancellation, and return any
// other error only when the store itself fails.
type Lookup interface {
	// RecordIDsByGTIN returns the records with a product, or a upc, whose
	// barcode is g, a GTIN-14 from ParseGTIN.
	RecordIDsByGTIN(ctx context.Context, g GTIN) ([]string, error)

	// RecordIDsByGTINPrefix returns the records with a product whose
	// upc_prefix the code g starts with: one of the product's
	// UPCPrefixGTINs is a prefix of g. It looks up the MaxUPCPrefixGTIN -
	// MinUPCPrefix prefixes of g from MinUPCPrefix+1 digits on, never
	// every prefix in the store.
	RecordIDsByGTINPrefix(ctx context.Context, g GTIN) ([]string, error)

	// RecordIDsByVehicle returns the records whose affected_models cover
	// make, model and model year. Make and model are compared upper-cased
	// with runs of spaces collapsed, as Transport Canada writes them; an
	// empty model matches every model of that make and year.
	RecordIDsByVehicle(ctx context.Context, make, model string, year int) ([]string, error)
}

// RecordSummary is what a lookup lists of a record: enough to name it and
// to fetch it with GET /recall/{record_id}.
type RecordSummary struct {
	RecordID   string
	RecallID   string
	RecallType string
	TitleEN    string // "" when the record has no English title
	TitleFR    string // "" when the record has no French title
}

// Title returns the summary's title in lang, falling back to the other
// language when lang has none, as Record.Title does.
func (s *RecordSummary) Title(lang string) string {
	first, second := s.TitleEN, s.TitleFR
	if lang == LangFR {
		first, second = second, first
	}
	if first != "" {
		return first
	}
	return second
}

// Summarizer describes records cheaply, without decoding them.
type Summarizer interface {
	// Summaries returns the summaries of the records with ids, newest
	// first in GET /recall's default order (event_date descending, then
	// record_id), each record once. Ids it does not hold are skipped: a
	// lookup may run against a store a refresh has just changed.
	Summaries(ids []string) []RecordSummary
}
