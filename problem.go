package rappel

// Problem is one record a source could not turn into a servable record, with
// the reason in a sentence. RecordID may be empty when the input was too
// broken to name one.
type Problem struct {
	Source   string `json:"source"`
	RecordID string `json:"record_id,omitempty"`
	Reason   string `json:"reason"`
}
