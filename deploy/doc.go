// Package deploy holds what runs next to rappel rather than in it: the
// Prometheus alert rules (prometheus/rappel-rules.yml) with their unit
// tests, and the Grafana dashboard (grafana/rappel-dashboard.json). Its
// tests run promtool over the rules; cmd/rappel checks that a running node
// exports every series the rules and the dashboard name.
package deploy
