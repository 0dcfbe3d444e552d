package main

import (
	"flag"

	"github.com/rappel-ca/rappel/alerts"
)

// registerWebhooks adds the webhook flags of rappel serve to fs; the
// webhooks run in the alert runner (AlertsConfig).
func registerWebhooks(fs *flag.FlagSet, c *alerts.HookConfig) {
	if c.DisableAfter == 0 {
		c.DisableAfter = alerts.DefaultDisableAfter
	}
	fs.BoolVar(&c.AllowHTTPLoopback, "webhooks-allow-http-loopback", c.AllowHTTPLoopback, "for development: accept http:// webhook endpoints and deliveries to loopback addresses (127.0.0.1, ::1, localhost)")
	fs.DurationVar(&c.DisableAfter, "webhooks-disable-after", c.DisableAfter, "`time` a webhook endpoint may fail every delivery before it is disabled")
}
