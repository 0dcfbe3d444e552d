package bundle

import (
	"os/exec"
	"strings"
	"testing"
)

// TestEmbed_NobundleTag checks the two builds of the bundle package: the
// one bin/rappel links embeds bundle/data, the one the Makefile's bundle
// step links (-tags nobundle) embeds nothing, so that writing a bundle
// does not change the binary that writes it (Makefile, RATIONALE.md "Why
// are the plugins and the bundle step keyed by their bytes…").
func TestEmbed_NobundleTag(t *testing.T) {
	embeds := func(tags ...string) string {
		args := append([]string{"list"}, tags...)
		args = append(args, "-f", "{{.EmbedPatterns}} {{len .EmbedFiles}}", ".")
		out, err := exec.Command("go", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := embeds(); !strings.HasPrefix(got, "[data] ") || strings.HasSuffix(got, " 0") {
		t.Errorf("the default build embeds %q; want the data directory and its files", got)
	}
	if got := embeds("-tags", "nobundle"); got != "[] 0" {
		t.Errorf("the nobundle build embeds %q; want nothing", got)
	}
}
