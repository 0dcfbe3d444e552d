// Package deploy holds what runs next to rappel rather than in it: the
// Prometheus alert rules (prometheus/rappel-rules.yml) with their unit
// tests, the Alertmanager configuration that holds back the alerts
// following from a failing disk (alertmanager/rappel-alertmanager.yml),
// and the Grafana dashboard (grafana/rappel-dashboard.json). Its tests run
// promtool over the rules and amtool over the configuration; cmd/rappel
// checks that a running node exports every series the rules and the
// dashboard name, and runs the rules in a real Prometheus scraping a node
// (TestPrometheus_RealAlerts).
package deploy
