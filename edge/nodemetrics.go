package edge

import (
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rappel-ca/rappel"
)

// The collectors below read the figures the node's parts keep (feeds, plugins,
// storage, read index, certificates) at each scrape, from the Server's
// fields: nothing is kept here between scrapes, and the parts do not
// depend on Prometheus. Every series of a part that is wired is there from
// the start, at zero (see precreateCounters for why).

// constMetric sends one series, its value converted.
func constMetric[N uint64 | int | float64](ch chan<- prometheus.Metric, d *prometheus.Desc, kind prometheus.ValueType, v N, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, kind, float64(v), labels...)
}

// constHistogram sends h as one histogram series.
func constHistogram(ch chan<- prometheus.Metric, d *prometheus.Desc, h rappel.Histogram, labels ...string) {
	ch <- prometheus.MustNewConstHistogram(d, h.Count, h.Sum, h.Cumulative(), labels...)
}

// feedCollector reports every live feed's state at scrape time, from
// Server.Feeds: nothing is kept between scrapes.
type feedCollector struct{ s *Server }

var (
	feedAgeDesc = prometheus.NewDesc("rappel_feed_last_success_age_seconds",
		"Seconds since the source's last successful refresh; absent while it has had none.", []string{"source"}, nil)
	feedSuccessDesc = prometheus.NewDesc("rappel_feed_last_success_timestamp_seconds",
		"Unix time of the source's last successful refresh; absent while it has had none.", []string{"source"}, nil)
	feedAttemptDesc = prometheus.NewDesc("rappel_feed_last_attempt_timestamp_seconds",
		"Unix time of the source's last refresh, successful or not; absent while it has had none. Later than the last success while refreshes fail.", []string{"source"}, nil)
	feedDurationDesc = prometheus.NewDesc("rappel_feed_last_refresh_duration_seconds",
		"How long the source's last refresh took, successful or not; absent until its first refresh since the node started.", []string{"source"}, nil)
	feedChangedDesc = prometheus.NewDesc("rappel_feed_last_refresh_changed_records",
		"The source's records its last successful refresh found added, changed or gone upstream; 0 until its first since the node started.", []string{"source"}, nil)
	feedErrorDesc = prometheus.NewDesc("rappel_feed_error",
		"1, labelled with its reason (last_error_reason in /health), when the source's last refresh failed; else 0 with reason \"\".", []string{"source", "reason"}, nil)
	feedStaleDesc = prometheus.NewDesc("rappel_feed_stale",
		"1 when the source has had no success for three refresh intervals, else 0.", []string{"source"}, nil)
	feedRecordsDesc = prometheus.NewDesc("rappel_feed_records",
		"Records the source's last successful refresh holds.", []string{"source"}, nil)
	feedRejectedDesc = prometheus.NewDesc("rappel_feed_rejected_records",
		"Upstream records the source's last refresh rejected.", []string{"source"}, nil)
	feedPluginDesc = prometheus.NewDesc("rappel_feed_plugin_info",
		"1, labelled with the SHA-256 of the plugin the source's last refresh ran (its plugin in /health).", []string{"source", "plugin"}, nil)
)

func (c *feedCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{feedAgeDesc, feedSuccessDesc, feedAttemptDesc, feedDurationDesc, feedChangedDesc, feedErrorDesc, feedStaleDesc, feedRecordsDesc, feedRejectedDesc, feedPluginDesc,
		feedStepDesc, feedChangedTotalDesc, feedRejectedTotalDesc, feedLastErrorDesc} {
		ch <- d
	}
}

func (c *feedCollector) Collect(ch chan<- prometheus.Metric) {
	now := c.s.Now()
	for _, f := range c.s.feeds() {
		if !f.LastSuccess.IsZero() {
			ch <- prometheus.MustNewConstMetric(feedAgeDesc, prometheus.GaugeValue, now.Sub(f.LastSuccess).Seconds(), f.Source)
			ch <- prometheus.MustNewConstMetric(feedSuccessDesc, prometheus.GaugeValue, unixSeconds(f.LastSuccess), f.Source)
		}
		if !f.LastAttempt.IsZero() {
			ch <- prometheus.MustNewConstMetric(feedAttemptDesc, prometheus.GaugeValue, unixSeconds(f.LastAttempt), f.Source)
		}
		if f.LastDuration > 0 {
			ch <- prometheus.MustNewConstMetric(feedDurationDesc, prometheus.GaugeValue, f.LastDuration.Seconds(), f.Source)
		}
		ch <- prometheus.MustNewConstMetric(feedChangedDesc, prometheus.GaugeValue, float64(f.LastChanged), f.Source)
		// One series per source, labelled with its reason: a failing
		// source's reason is read beside the 1, and the alert counts its
		// minutes across reasons (deploy/prometheus/rappel-rules.yml).
		ch <- prometheus.MustNewConstMetric(feedErrorDesc, prometheus.GaugeValue, boolValue(f.LastError != ""), f.Source, string(f.LastErrorReason))
		ch <- prometheus.MustNewConstMetric(feedStaleDesc, prometheus.GaugeValue, boolValue(f.Stale), f.Source)
		ch <- prometheus.MustNewConstMetric(feedRecordsDesc, prometheus.GaugeValue, float64(f.Records), f.Source)
		ch <- prometheus.MustNewConstMetric(feedRejectedDesc, prometheus.GaugeValue, float64(f.Rejected), f.Source)
		if f.Plugin != "" {
			ch <- prometheus.MustNewConstMetric(feedPluginDesc, prometheus.GaugeValue, 1, f.Source, f.Plugin)
		}
		collectRefreshes(ch, f)
	}
}

// pluginCollector reports PluginStats.
type pluginCollector struct{ s *Server }

var (
	pluginRunsDesc = prometheus.NewDesc("rappel_plugin_runs_total",
		"Runs of the source's plugins (the active one's on a refresh, a candidate's on its trial), by source.", []string{"source"}, nil)
	pluginFailuresDesc = prometheus.NewDesc("rappel_plugin_run_failures_total",
		"Runs of the source's plugins that failed (trapped, exited non-zero, ran out of time, memory or output), by source.", []string{"source"}, nil)
	pluginDurationDesc = prometheus.NewDesc("rappel_plugin_run_duration_seconds",
		"Time a run of the source's plugin took, failed runs included, by source.", []string{"source"}, nil)
	pluginOutputDesc = prometheus.NewDesc("rappel_plugin_output_bytes_total",
		"Bytes the source's plugins wrote as record lines, by source.", []string{"source"}, nil)
	pluginActivationsDesc = prometheus.NewDesc("rappel_plugin_activations_total",
		"Plugins that became the source's since the node started (swaps, approvals, a fleet leader's adopted, a source added), by source.", []string{"source"}, nil)
	pluginRefusalsDesc = prometheus.NewDesc("rappel_plugin_refusals_total",
		"Candidate plugins refused, by source and reason: unverified (signature), manifest, unusable (not a usable module), run_failed (its trial run failed), output (it lost or refused records against the active plugin).", []string{"source", "reason"}, nil)
	pluginHeldDesc = prometheus.NewDesc("rappel_plugin_held",
		"1 while a candidate plugin of the source waits for an operator's approval (POST /admin/plugins/{source}/approve), else 0, by source.", []string{"source"}, nil)
)

func (c *pluginCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{pluginRunsDesc, pluginFailuresDesc, pluginDurationDesc, pluginOutputDesc, pluginActivationsDesc, pluginRefusalsDesc, pluginHeldDesc} {
		ch <- d
	}
}

func (c *pluginCollector) Collect(ch chan<- prometheus.Metric) {
	if c.s.PluginStats == nil {
		return
	}
	for _, st := range c.s.PluginStats() {
		constMetric(ch, pluginRunsDesc, prometheus.CounterValue, st.Runs, st.Source)
		constMetric(ch, pluginFailuresDesc, prometheus.CounterValue, st.Failures, st.Source)
		constHistogram(ch, pluginDurationDesc, st.RunSeconds, st.Source)
		constMetric(ch, pluginOutputDesc, prometheus.CounterValue, st.OutputBytes, st.Source)
		constMetric(ch, pluginActivationsDesc, prometheus.CounterValue, st.Activations, st.Source)
		for _, reason := range rappel.RefusalClasses {
			constMetric(ch, pluginRefusalsDesc, prometheus.CounterValue, st.Refusals[reason], st.Source, reason)
		}
		constMetric(ch, pluginHeldDesc, prometheus.GaugeValue, boolValue(st.Held), st.Source)
	}
}

// storageCollector reports StorageStats.
type storageCollector struct{ s *Server }

// storageDescs are the storage's series, each with how it reads its value.
var storageDescs = []struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	value func(rappel.StorageStats) uint64
}{
	{prometheus.NewDesc("rappel_storage_disk_bytes", "Bytes the node's Pebble store takes on disk: tables, write-ahead log and obsolete files not yet deleted.", nil, nil),
		prometheus.GaugeValue, func(s rappel.StorageStats) uint64 { return s.DiskBytes }},
	{prometheus.NewDesc("rappel_storage_compactions_total", "Compactions the Pebble store ran since it opened.", nil, nil),
		prometheus.CounterValue, func(s rappel.StorageStats) uint64 { return s.Compactions }},
	{prometheus.NewDesc("rappel_storage_compaction_debt_bytes", "Bytes Pebble estimates its compactions still have to rewrite to bring the tree back into shape; growing without end means writes outpace compactions.", nil, nil),
		prometheus.GaugeValue, func(s rappel.StorageStats) uint64 { return s.CompactionDebtBytes }},
	{prometheus.NewDesc("rappel_storage_compactions_in_progress", "Pebble compactions running now.", nil, nil),
		prometheus.GaugeValue, func(s rappel.StorageStats) uint64 { return s.InProgressCompactions }},
	{prometheus.NewDesc("rappel_storage_flushes_total", "Memtables Pebble flushed to tables since it opened.", nil, nil),
		prometheus.CounterValue, func(s rappel.StorageStats) uint64 { return s.Flushes }},
	{prometheus.NewDesc("rappel_storage_wal_written_bytes_total", "Bytes written to Pebble's write-ahead log since it opened.", nil, nil),
		prometheus.CounterValue, func(s rappel.StorageStats) uint64 { return s.WALBytesWritten }},
	{prometheus.NewDesc("rappel_storage_wal_files", "Live files of Pebble's write-ahead log.", nil, nil),
		prometheus.GaugeValue, func(s rappel.StorageStats) uint64 { return s.WALFiles }},
	{prometheus.NewDesc("rappel_storage_wal_bytes", "Bytes of Pebble's live write-ahead log files on disk.", nil, nil),
		prometheus.GaugeValue, func(s rappel.StorageStats) uint64 { return s.WALBytes }},
	{prometheus.NewDesc("rappel_storage_read_amplification", "Tables a Pebble read may have to look at: the sublevels of L0 and the non-empty lower levels; above 20 or so, reads slow down.", nil, nil),
		prometheus.GaugeValue, func(s rappel.StorageStats) uint64 { return s.ReadAmplification }},
	{prometheus.NewDesc("rappel_storage_memtable_bytes", "Bytes of memory Pebble's memtables take.", nil, nil),
		prometheus.GaugeValue, func(s rappel.StorageStats) uint64 { return s.MemtableBytes }},
	{prometheus.NewDesc("rappel_storage_l0_files", "Tables in Pebble's level 0, which every read looks at; they pile up when compactions fall behind.", nil, nil),
		prometheus.GaugeValue, func(s rappel.StorageStats) uint64 { return s.L0Files }},
}

func (c *storageCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range storageDescs {
		ch <- d.desc
	}
}

func (c *storageCollector) Collect(ch chan<- prometheus.Metric) {
	if c.s.StorageStats == nil {
		return
	}
	st := c.s.StorageStats()
	for _, d := range storageDescs {
		constMetric(ch, d.desc, d.kind, d.value(st))
	}
}

// indexCollector reports IndexStats.
type indexCollector struct{ s *Server }

var (
	indexDeltaDesc = prometheus.NewDesc("rappel_index_delta_records",
		"Records in the read index's in-memory delta over its base segment; folded into a new base once past the merge threshold.", nil, nil)
	indexMergesDesc = prometheus.NewDesc("rappel_index_merges_total",
		"Merges of the read index's delta into a new base segment since the node started.", nil, nil)
	indexOpenDesc = prometheus.NewDesc("rappel_index_segment_open_duration_seconds",
		"Time to open (map and check) a read-index segment, at start and after each refresh or merge.", nil, nil)
)

func (c *indexCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- indexDeltaDesc
	ch <- indexMergesDesc
	ch <- indexOpenDesc
}

func (c *indexCollector) Collect(ch chan<- prometheus.Metric) {
	if c.s.IndexStats == nil {
		return
	}
	st := c.s.IndexStats()
	constMetric(ch, indexDeltaDesc, prometheus.GaugeValue, st.DeltaRecords)
	constMetric(ch, indexMergesDesc, prometheus.CounterValue, st.Merges)
	constHistogram(ch, indexOpenDesc, st.SegmentOpenSeconds)
}

// certificateCollector reports the expiry of the certificates the node
// serves over TLS.
type certificateCollector struct{ s *Server }

var certExpiryDesc = prometheus.NewDesc("rappel_tls_certificate_expiry_timestamp_seconds",
	"Unix time the certificate the node serves for the name expires, by name (one of --tls-domains); only when the node serves TLS (--tls-domains), and absent for a name while it has no certificate yet.", []string{"name"}, nil)

func (c *certificateCollector) Describe(ch chan<- *prometheus.Desc) { ch <- certExpiryDesc }

func (c *certificateCollector) Collect(ch chan<- prometheus.Metric) {
	if c.s.Certificates == nil {
		return
	}
	for name, notAfter := range c.s.Certificates() {
		constMetric(ch, certExpiryDesc, prometheus.GaugeValue, unixSeconds(notAfter), name)
	}
}

// Refresh figures beyond the last refresh's, from FeedState.Refreshes.
var (
	feedStepDesc = prometheus.NewDesc("rappel_feed_refresh_step_duration_seconds",
		"Time a step of the source's refreshes took, by source and step: fetch (its documents, conditionally), normalize (its plugin's runs), assemble (merging the sources' records), write (the store's batch). Only steps that completed are counted: one that failed, was not reached, or was not needed (normalize when nothing changed upstream) is not.", []string{"source", "step"}, nil)
	feedChangedTotalDesc = prometheus.NewDesc("rappel_feed_changed_records_total",
		"The source's records its successful refreshes found added, changed or gone upstream, since the node started, by source.", []string{"source"}, nil)
	feedRejectedTotalDesc = prometheus.NewDesc("rappel_feed_rejected_records_total",
		"Records the source's successful refreshes rejected (the plugin's refusals, invalid records, failed detail documents), since the node started, by source.", []string{"source"}, nil)
	feedLastErrorDesc = prometheus.NewDesc("rappel_feed_last_error_timestamp_seconds",
		"Unix time the source's last failed refresh began, by source; absent while none has failed since the node started.", []string{"source"}, nil)
)

// collectRefreshes sends f's refresh figures.
func collectRefreshes(ch chan<- prometheus.Metric, f rappel.FeedState) {
	st := f.Refreshes
	for _, step := range rappel.RefreshSteps {
		h, ok := st.Steps[step]
		if !ok {
			h = rappel.NewHistogram(rappel.StepBuckets)
		}
		constHistogram(ch, feedStepDesc, h, f.Source, step)
	}
	constMetric(ch, feedChangedTotalDesc, prometheus.CounterValue, st.Changed, f.Source)
	constMetric(ch, feedRejectedTotalDesc, prometheus.CounterValue, st.Rejected, f.Source)
	if !st.LastError.IsZero() {
		constMetric(ch, feedLastErrorDesc, prometheus.GaugeValue, unixSeconds(st.LastError), f.Source)
	}
}

// unixSeconds is t as Unix time in seconds, with its fraction.
func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// coverageCollector reports the coverage of the data served
// (rappel.CoverageOf), read from the snapshot, which counted it when it
// was built: a series per year of the newest rappel.CoverageYears that
// hold a notice, so that the years labelled stay few.
type coverageCollector struct{ s *Server }

var (
	coverageNoticesDesc = prometheus.NewDesc("rappel_coverage_notices",
		fmt.Sprintf("Health Canada and CFIA notices served (vehicle recalls left out: they list no products), by year of event_date; the %d newest years holding one.", rappel.CoverageYears), []string{"year"}, nil)
	coverageProductsDesc = prometheus.NewDesc("rappel_coverage_notices_with_products",
		"Notices of the year listing at least one product, by year of event_date.", []string{"year"}, nil)
	coverageBarcodeDesc = prometheus.NewDesc("rappel_coverage_notices_with_barcode",
		"Notices of the year GET /recall/upc finds by a barcode (a product's or the record's upc read as a UPC, EAN or GTIN, or a product's upc_prefix), by year of event_date.", []string{"year"}, nil)
	coverageProductsRatioDesc = prometheus.NewDesc("rappel_coverage_products_ratio",
		"Share of the year's notices listing at least one product, from 0 to 1, by year of event_date; it falls when the per-notice source of products stops.", []string{"year"}, nil)
	coverageBarcodeRatioDesc = prometheus.NewDesc("rappel_coverage_barcode_ratio",
		"Share of the year's notices with a barcode, from 0 to 1, by year of event_date.", []string{"year"}, nil)
)

func (c *coverageCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{coverageNoticesDesc, coverageProductsDesc, coverageBarcodeDesc, coverageProductsRatioDesc, coverageBarcodeRatioDesc} {
		ch <- d
	}
}

func (c *coverageCollector) Collect(ch chan<- prometheus.Metric) {
	if c.s.Catalog == nil {
		return
	}
	for _, y := range rappel.ReportedCoverage(c.s.Catalog.Snapshot().Coverage()) {
		year := strconv.Itoa(y.Year)
		constMetric(ch, coverageNoticesDesc, prometheus.GaugeValue, y.Notices, year)
		constMetric(ch, coverageProductsDesc, prometheus.GaugeValue, y.WithProducts, year)
		constMetric(ch, coverageBarcodeDesc, prometheus.GaugeValue, y.WithBarcode, year)
		constMetric(ch, coverageProductsRatioDesc, prometheus.GaugeValue, y.ProductsShare(), year)
		constMetric(ch, coverageBarcodeRatioDesc, prometheus.GaugeValue, y.BarcodeShare(), year)
	}
}

// fleetCollector reports FleetStats, on a node of a fleet.
type fleetCollector struct{ s *Server }

var (
	fleetLeadingDesc  = prometheus.NewDesc("rappel_fleet_leading", "1 while this node holds the fleet's feed lease (it refreshes the feeds), else 0.", nil, nil)
	fleetVersionDesc  = prometheus.NewDesc("rappel_fleet_dataset_version", "The fleet's dataset version this node's store holds.", nil, nil)
	fleetLatestDesc   = prometheus.NewDesc("rappel_fleet_latest_version", "The fleet's newest dataset version, as this node last saw it.", nil, nil)
	fleetLagDesc      = prometheus.NewDesc("rappel_fleet_lag_seconds", "How far behind the fleet this node may be: the age of the oldest publication it has not applied, or, once it has not reached the shared store for a while, the time since it last did; 0 when caught up.", nil, nil)
	fleetContactDesc  = prometheus.NewDesc("rappel_fleet_since_contact_seconds", "Time since this node last read the fleet's log or renewed its lease.", nil, nil)
	fleetFailuresDesc = prometheus.NewDesc("rappel_fleet_publish_failures_total", "Refresh writes this node could not publish to the fleet (shared store unreachable, lease lost), which it therefore did not store.", nil, nil)
	fleetReadyDesc    = prometheus.NewDesc("rappel_fleet_ready", "1 once this node has caught up with the fleet (/readyz), else 0.", nil, nil)
	fleetDegradedDesc = prometheus.NewDesc("rappel_fleet_degraded", "1 while this node cannot reach the shared store or is behind the fleet (/health says degraded), else 0.", nil, nil)
)

func (c *fleetCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{fleetLeadingDesc, fleetVersionDesc, fleetLatestDesc, fleetLagDesc, fleetContactDesc, fleetFailuresDesc, fleetReadyDesc, fleetDegradedDesc} {
		ch <- d
	}
}

func (c *fleetCollector) Collect(ch chan<- prometheus.Metric) {
	if c.s.FleetStats == nil {
		return
	}
	st := c.s.FleetStats()
	constMetric(ch, fleetLeadingDesc, prometheus.GaugeValue, boolValue(st.Leading))
	constMetric(ch, fleetVersionDesc, prometheus.GaugeValue, float64(st.Version))
	constMetric(ch, fleetLatestDesc, prometheus.GaugeValue, float64(st.Latest))
	constMetric(ch, fleetLagDesc, prometheus.GaugeValue, st.Lag.Seconds())
	constMetric(ch, fleetContactDesc, prometheus.GaugeValue, st.SinceContact.Seconds())
	constMetric(ch, fleetFailuresDesc, prometheus.CounterValue, float64(st.PublishFailures))
	constMetric(ch, fleetReadyDesc, prometheus.GaugeValue, boolValue(st.Ready))
	constMetric(ch, fleetDegradedDesc, prometheus.GaugeValue, boolValue(st.Degraded))
}
