package rappel

import (
	"net/url"
	"time"
)

// The kinds of dataset a node can serve (DatasetInfo.Kind, Provenance.Kind).
const (
	// DatasetSynthetic is data the corpus generator made up: a demo and a
	// test fixture, never a source of truth. A node serving it says so in
	// /health and in a Rappel-Dataset header on every data answer, and its
	// first live refresh replaces all of it at once (see Switch).
	DatasetSynthetic = "synthetic"
	// DatasetAgencies is data fetched from the agencies' feeds: by a live
	// refresh, or by `rappel bundle --fetch` into a release bundle.
	DatasetAgencies = "agencies"
)

// Provenance says where a bundle's data came from: generated (the
// generator's seed and reference day) or fetched from the agencies (each
// document's address, without its query string, and when it was fetched).
type Provenance struct {
	// Kind is DatasetSynthetic or DatasetAgencies.
	Kind string `json:"kind"`
	// Seed and ReferenceDate are the generator's, for a synthetic bundle.
	Seed          uint64 `json:"seed,omitempty"`
	ReferenceDate string `json:"reference_date,omitempty"`
	// Fetched lists, for a bundle fetched from the agencies, every
	// document fetched whole (the per-notice detail documents are counted
	// in Details), in source and name order.
	Fetched []FetchedDoc `json:"fetched,omitempty"`
	// Details counts the notices whose detail documents were fetched, and
	// DetailsLeft those the fetch's budget left for the node's first
	// refreshes.
	Details     int `json:"details,omitempty"`
	DetailsLeft int `json:"details_left,omitempty"`
}

// FetchedDoc is one upstream document a bundle was built from.
type FetchedDoc struct {
	Source string    `json:"source"`
	Name   string    `json:"name"`
	URL    string    `json:"url"`
	At     time.Time `json:"at"`
	SHA256 string    `json:"sha256"`
	Bytes  int64     `json:"bytes"`
}

// PublicURL is u without its query string, fragment or user info, which
// may hold a key: the form in which an upstream address is recorded or
// shown. A u that does not parse gives "".
func PublicURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	p.RawQuery, p.ForceQuery, p.Fragment, p.RawFragment, p.User = "", false, "", "", nil
	return p.String()
}

// Synthetic reports whether the dataset is, or may hold, generated data.
// A store written before datasets had a kind is taken for synthetic
// whatever its Source says: its bundle was generated, and a live refresh
// before this version kept generated contributions beside the real ones,
// so its next live refresh replaces it whole.
func (i DatasetInfo) Synthetic() bool { return i.Kind != DatasetAgencies }
