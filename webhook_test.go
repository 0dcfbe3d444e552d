package rappel

import (
	"net"
	"testing"
)

// TestWebhookRequest_URL checks the URLs POST /recall/webhooks refuses
// before storing them, those no delivery could reach among them: a port
// out of range, a scoped IPv6 literal of the node's own links, and the
// IPv6 forms that carry a private or loopback IPv4 address, and the names
// that always resolve to loopback.
func TestWebhookRequest_URL(t *testing.T) {
	for u, ok := range map[string]bool{
		"https://hooks.example.ca/rappel":      true,
		"https://hooks.example.ca:8443/rappel": true,
		"https://hooks.example.ca:65535/":      true,
		"https://[2606:4700:4700::1111]/":      true,
		"https://[2002:808:808::1]/":           true, // 6to4 of 8.8.8.8
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
	} {
		v := u
		_, _, _, err := (&WebhookRequest{URL: &v}).Validate(false)
		if (err == nil) != ok {
			t.Errorf("Validate(%s): %v; want accepted %v", u, err, ok)
		}
	}
}

// TestPublicIP_Embedded checks that an IPv6 address carrying an IPv4 one
// is judged as that address.
func TestPublicIP_Embedded(t *testing.T) {
	for s, want := range map[string]bool{
		"::127.0.0.1": false, "::10.0.0.1": false, "::8.8.8.8": false,
		"2002:7f00:1::": false, "2002:a9fe:a9fe::": false, "2002:c0a8:1::": false, "2002:808:808::": true,
		"64:ff9b:1::808:808": false, "2606:4700:4700::1111": true, "8.8.8.8": true, "::ffff:8.8.8.8": true,
	} {
		if got := PublicIP(net.ParseIP(s)); got != want {
			t.Errorf("PublicIP(%s) = %v, want %v", s, got, want)
		}
	}
}
