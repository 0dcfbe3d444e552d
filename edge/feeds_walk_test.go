package edge

// feedsBadCases are the validation walk's bad requests of GET
// /recall/changes, GET /recall/export and GET /recall/feed.atom: every
// parameter each declares. q encodes a query; get builds a case.
func feedsBadCases(q func(kv ...string) string, get func(what, path, query string, status int, items ...string) badCase) []badCase {
	cases := []badCase{
		get("query:since", "/recall/changes", q("since", "yesterday"), 422, "value_error@query.since"),
		get("query:limit", "/recall/changes", q("limit", "0", "lang", "de"), 422, "greater_than_equal@query.limit", "enum@query.lang"),
		get("query:lang", "/recall/changes", q("lang", "EN"), 422, "enum@query.lang"),
		get("query:format", "/recall/export", q("format", "xml"), 422, "enum@query.format"),
		get("query:limit", "/recall/feed.atom", q("limit", "101"), 422, "less_than_equal@query.limit"),
	}
	for _, path := range feedsFilterPaths {
		cases = append(cases,
			get("query:q", path, q("q", `"listeria`), 422, "value_error@query.q"),
			get("query:category", path, q("category", "Spacecraft"), 422, "value_error@query.category"),
			get("query:recall_type", path, q("recall_type", "vehicule"), 422, "enum@query.recall_type"),
			get("query:recall_agency", path, q("recall_agency", "RCMP"), 422, "enum@query.recall_agency"),
			get("query:hazard_class", path, q("hazard_class", "class_4"), 422, "enum@query.hazard_class"),
			get("query:allergen", path, q("allergen", "peanuts"), 422, "enum@query.allergen"),
			get("query:recall_status", path, q("recall_status", "archive"), 422, "enum@query.recall_status"),
			get("query:issued_after", path, q("issued_after", "2024-02-30"), 422, "date_from_datetime_parsing@query.issued_after"),
			get("query:date_from", path, q("date_from", "yesterday"), 422, "date_from_datetime_parsing@query.date_from"),
			get("query:date_after", path, q("date_after", "2023-02-29"), 422, "date_from_datetime_parsing@query.date_after"),
			get("query:issued_before", path, q("issued_before", "2024-01-01T00:00:00Z"), 422, "date_from_datetime_parsing@query.issued_before"),
			get("query:date_to", path, q("date_to", "04/01/2024"), 422, "date_from_datetime_parsing@query.date_to"),
			get("query:date_before", path, "date_to=2024-01-01&date_before=2024-01-01", 422, "value_error@query.date_before"),
			get("query:lang", path, q("lang", "de"), 422, "enum@query.lang"),
			get("query:typos", path, q("typos", "maybe"), 422, "enum@query.typos"),
			get("query:prefix", path, q("prefix", "all"), 422, "enum@query.prefix"),
		)
	}
	return cases
}

// feedsFilterPaths are the routes that take GET /recall's filters.
var feedsFilterPaths = []string{"/recall/export", "/recall/feed.atom"}
