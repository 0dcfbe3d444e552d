package rappel

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel/idn"
)

// TestWebhookRequest_URL checks the URLs POST /recall/webhooks refuses
// before storing them, those no delivery could reach among them: a port
// out of range, a scoped IPv6 literal of the node's own links, the IPv6
// forms that carry an IPv4 address, the names that always resolve to
// loopback, numbers some resolvers read as IPv4 addresses, and hosts that
// are not ASCII.
func TestWebhookRequest_URL(t *testing.T) {
	for u, ok := range map[string]bool{
		"https://hooks.example.ca/rappel":      true,
		"https://hooks.example.ca:8443/rappel": true,
		"https://hooks.example.ca:65535/":      true,
		"https://[2606:4700:4700::1111]/":      true,
		"https://1.1.1.1/":                     true,
		"https://hooks.example.ca/é?q=ü":       true, // non-ASCII in the path and query is percent-encoded when posted
		"https://xn--bcher-kva.ca/":            true,
		"https://123.example.ca/":              true,
		"https://[2002:808:808::1]/":           false, // 6to4, even of 8.8.8.8
		"https://[::ffff:1.1.1.1]/":            false, // IPv4-mapped, even of a public address
		"https://hooks.example.ca:0/":          false,
		"https://hooks.example.ca:99999/":      false,
		"https://hooks.example.ca:00443/":      true,
		"https://[fe80::1%25eth0]/":            false,
		"https://[::127.0.0.1]/":               false, // IPv4-compatible
		"https://[::a9fe:a9fe]/":               false, // the same, of 169.254.169.254
		"https://[2002:7f00:1::]/":             false, // 6to4 of 127.0.0.1
		"https://[2002:a00:1::1]/":             false, // 6to4 of 10.0.0.1
		"https://[64:ff9b:1::a00:1]/":          false, // local-use NAT64
		"https://localhost/":                   false,
		"https://LocalHost.:8443/":             false,
		"https://hooks.localhost/":             false,
		"https://localhost.example.ca/":        true,
		"https://2130706433/":                  false, // 127.0.0.1 to inet_aton
		"https://0x7f.1/":                      false,
		"https://010.0.0.1/":                   false,
		"https://bücher.ca/":                   false,
		"https://b%C3%BCcher.ca/":              false,
		"https://hooks\u202eac.example.ca/":    false,
		"https://hooks\ufffd.example.ca/":      false,
		"https://hooks.example.ca/\u202egpj":   false,
	} {
		v := u
		_, _, _, err := (&WebhookRequest{URL: &v}).Validate(context.Background(), idn.Names{}, false)
		if (err == nil) != ok {
			t.Errorf("Validate(%s): %v; want accepted %v", u, err, ok)
		}
	}
}

// TestWebhookRequest_Host checks the sentences of a refused host: a
// reserved address names its block and says what to give instead, and a
// host that is not ASCII asks for its A-label, suggesting it when the name
// has one.
func TestWebhookRequest_Host(t *testing.T) {
	for u, want := range map[string]string{
		"https://192.0.2.2/":                "Body field 'url' is refused: 192.0.2.2 is in 192.0.2.0/24 (documentation, TEST-NET-1), which a webhook may not reach; give a public address or a host name.",
		"https://bücher.ca/rappel":          "Body field 'url' has the host name 'bücher.ca', which is not ASCII; send the host name in its A-label (xn--) form, in ASCII; did you mean 'https://xn--bcher-kva.ca/rappel'?",
		"https://hooks\u202eac.example.ca/": "Body field 'url' has a host name that holds U+202E (right-to-left override, an invisible format character) at byte 5; send the host name in its A-label (xn--) form, in ASCII.",
		"https://hooks\ufffd.example.ca/":   "Body field 'url' has a host name that holds U+FFFD, the replacement character, at byte 5",
	} {
		v := u
		_, _, _, err := (&WebhookRequest{URL: &v}).Validate(context.Background(), idn.Names{}, false)
		e, ok := err.(*Error)
		if !ok || len(e.Items) != 1 || !strings.HasPrefix(e.Items[0].Msg, want) {
			t.Errorf("Validate(%q): %v; want an item starting %q", u, err, want)
		}
	}
}

// TestWebhookView_Filters checks that an endpoint's view shows every
// filter of its saved search under the filter's Param (Filters), as the
// body that created it named them.
func TestWebhookView_Filters(t *testing.T) {
	w := &Webhook{ID: "wh_1", URL: "https://hooks.example.ca/"}
	for i := range Filters {
		*Filters[i].Of(&w.Search.FilterValues) = "value-" + Filters[i].Param
	}
	b, err := json.Marshal(w.View())
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for _, f := range Filters {
		if got[f.Param] != "value-"+f.Param {
			t.Errorf("the view shows %s as %v, want %q: %s", f.Param, got[f.Param], "value-"+f.Param, b)
		}
	}
}
