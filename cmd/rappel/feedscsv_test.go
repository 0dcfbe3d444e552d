package main

import (
	"flag"
	"io"
	"testing"

	"github.com/rappel-ca/rappel/feeds"
)

// TestFeedsConfig_DumpCSV checks the dump's CSV flags: by default the real
// CSVs beside the default JSON, the CSV beside a JSON given elsewhere, an
// address of its own, or none.
func TestFeedsConfig_DumpCSV(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		en, fr string
	}{
		{nil, feeds.DefaultHCDumpENCSV, feeds.DefaultHCDumpFRCSV},
		{[]string{"--feed-hc-en", "http://127.0.0.1:9/hc/recalls-en.json"}, "http://127.0.0.1:9/hc/recalls-en.csv", feeds.DefaultHCDumpFRCSV},
		{[]string{"--feed-hc-en-csv", "http://127.0.0.1:9/en.csv", "--feed-hc-fr-csv", "off"}, "http://127.0.0.1:9/en.csv", ""},
	} {
		var c FeedsConfig
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		c.register(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if err := c.validate(); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		docs := c.sources()[0].Docs
		got := [2]string{}
		for i, d := range docs {
			if d.Fallback != nil {
				got[i] = d.Fallback.URL
			}
		}
		if got != [2]string{tc.en, tc.fr} {
			t.Errorf("%v: the CSVs %q, want %q and %q", tc.args, got, tc.en, tc.fr)
		}
	}
}
