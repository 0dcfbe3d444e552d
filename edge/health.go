package edge

import (
	"encoding/json"
	"math"
	"net/http"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/buildinfo"
)

// health is the body of GET /health (README, "Routes").
type health struct {
	Status           string `json:"status"`
	Records          int    `json:"records"`
	DatasetUpdatedAt string `json:"dataset_updated_at,omitempty"`
	DatasetSource    string `json:"dataset_source,omitempty"`
	// DatasetKind is "synthetic" while the node serves generated demo
	// data (the bundle's), "agencies" once it serves the agencies' own.
	DatasetKind string `json:"dataset_kind"`
	// DatasetVersion is the fleet's version of the data served (the last
	// publication of its leader applied); absent on a single node.
	DatasetVersion int64 `json:"dataset_version,omitempty"`
	// Fleet is the node's place in its fleet (role, leader, versions,
	// lag); absent on a single node.
	Fleet any `json:"fleet,omitempty"`
	// Feeds lists each feed's last attempt and success, last error,
	// staleness, records, rejected records and active plugin; empty when
	// the node runs no feeds, never null.
	Feeds []rappel.FeedState `json:"feeds"`
	// Build says which binary answers, so that a rollout can be followed
	// node by node from the load balancer's side.
	Build buildinfo.Info `json:"build"`
	// APIVersion is the version of the API the node serves (APIVersion),
	// which a client checks its major against.
	APIVersion string `json:"api_version"`
	// Storage is there while the node's storage fails its writes: status
	// is then "degraded".
	Storage *storageFault `json:"storage,omitempty"`
	// StaleSources names the feeds with no successful refresh for three
	// intervals: status is then "degraded", the node serving their
	// records as they were.
	StaleSources []string `json:"stale_sources,omitempty"`
	// Coverage is, for the newest years of recalls, the share of the
	// notices with products and with a barcode (rappel.CoverageOf);
	// empty when the data holds no notice, never null.
	Coverage []yearCoverage `json:"coverage"`
}

// yearCoverage is one year of /health's coverage.
type yearCoverage struct {
	Year          int     `json:"year"`
	Notices       int     `json:"notices"`
	WithProducts  int     `json:"with_products"`
	WithBarcode   int     `json:"with_barcode"`
	ProductsShare float64 `json:"products_share"`
	BarcodeShare  float64 `json:"barcode_share"`
}

// healthCoverage is the coverage of snap that /health reports, its shares
// rounded to four places.
func healthCoverage(snap rappel.Snapshot) []yearCoverage {
	years := rappel.ReportedCoverage(snap.Coverage())
	out := make([]yearCoverage, len(years))
	round := func(x float64) float64 { return math.Round(x*1e4) / 1e4 }
	for i, c := range years {
		out[i] = yearCoverage{Year: c.Year, Notices: c.Notices, WithProducts: c.WithProducts, WithBarcode: c.WithBarcode,
			ProductsShare: round(c.ProductsShare()), BarcodeShare: round(c.BarcodeShare())}
	}
	return out
}

// storageFault is why and since when the node's storage fails its writes.
type storageFault struct {
	Error string `json:"error"`
	Since string `json:"since"`
}

// health answers 200 while the node can answer from the data it holds, and
// 503 when it holds no records at all, so that a load balancer routes
// around it. Its status is "degraded" while the storage fails its writes
// (reads are still served, writes answer 503), while a feed is stale
// (named in stale_sources), and while a fleet node is behind its fleet.
func (s *Server) health(w http.ResponseWriter, r *http.Request) error {
	if err := paramsOf(w).err(); err != nil {
		return err
	}
	snap := s.Catalog.Snapshot()
	if snap.Len() == 0 {
		return rappel.Errorf(rappel.EUNAVAILABLE,
			"No recall data is loaded yet, so this node cannot answer; retry shortly or use another node.")
	}
	info := snap.Info()
	h := health{Status: "ok", Records: snap.Len(), DatasetSource: info.Source, DatasetKind: datasetKind(info), DatasetVersion: info.Version, Feeds: s.feeds(), Build: s.Build, APIVersion: APIVersion, Coverage: healthCoverage(snap)}
	if s.Fleet != nil {
		h.Fleet = s.Fleet()
	}
	if s.FleetStats != nil && s.FleetStats().Degraded {
		h.Status = "degraded"
	}
	for _, f := range h.Feeds {
		if f.Stale {
			h.StaleSources = append(h.StaleSources, f.Source)
			h.Status = "degraded"
		}
	}
	if s.StorageFault != nil {
		if err, since := s.StorageFault(); err != nil {
			h.Status = "degraded"
			h.Storage = &storageFault{Error: err.Error(), Since: since.UTC().Format(time.RFC3339)}
		}
	}
	if !info.UpdatedAt.IsZero() {
		h.DatasetUpdatedAt = info.UpdatedAt.UTC().Format(time.RFC3339)
	}
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	writeJSON(w, r, http.StatusOK, b)
	return nil
}

// datasetKind names the kind of the data described by info, as /health, /
// and the Rappel-Dataset header say it.
func datasetKind(info rappel.DatasetInfo) string {
	if info.Synthetic() {
		return rappel.DatasetSynthetic
	}
	return rappel.DatasetAgencies
}
