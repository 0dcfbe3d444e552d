package rappel

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel/idn"
)

// TestCheckWebhookAddress_Ranges checks every block of the IANA IPv4 and
// IPv6 Special-Purpose Address Registries, multicast and the IPv6 space
// outside 2000::/3: an address at each end of a block is refused, naming
// the most specific block, and the public addresses just outside a block
// are not.
func TestCheckWebhookAddress_Ranges(t *testing.T) {
	refused := map[string]string{ // address → the block the refusal names
		// IPv4
		"0.0.0.0": "0.0.0.0/32", "0.0.0.1": "0.0.0.0/8", "0.255.255.255": "0.0.0.0/8",
		"10.0.0.0": "10.0.0.0/8", "10.255.255.255": "10.0.0.0/8",
		"100.64.0.0": "100.64.0.0/10", "100.127.255.255": "100.64.0.0/10",
		"127.0.0.1": "127.0.0.0/8", "127.255.255.255": "127.0.0.0/8",
		"169.254.0.0": "169.254.0.0/16", "169.254.169.254": "169.254.0.0/16", "169.254.255.255": "169.254.0.0/16",
		"172.16.0.0": "172.16.0.0/12", "172.31.255.255": "172.16.0.0/12",
		"192.0.0.0": "192.0.0.0/29", "192.0.0.7": "192.0.0.0/29", "192.0.0.8": "192.0.0.8/32",
		"192.0.0.9": "192.0.0.9/32", "192.0.0.10": "192.0.0.10/32", "192.0.0.11": "192.0.0.0/24",
		"192.0.0.170": "192.0.0.170/32", "192.0.0.171": "192.0.0.171/32", "192.0.0.255": "192.0.0.0/24",
		"192.0.2.0": "192.0.2.0/24", "192.0.2.2": "192.0.2.0/24", "192.0.2.255": "192.0.2.0/24",
		"192.31.196.0": "192.31.196.0/24", "192.31.196.255": "192.31.196.0/24",
		"192.52.193.0": "192.52.193.0/24", "192.52.193.255": "192.52.193.0/24",
		"192.88.99.0": "192.88.99.0/24", "192.88.99.1": "192.88.99.0/24", "192.88.99.255": "192.88.99.0/24",
		"192.168.0.0": "192.168.0.0/16", "192.168.255.255": "192.168.0.0/16",
		"192.175.48.0": "192.175.48.0/24", "192.175.48.255": "192.175.48.0/24",
		"198.18.0.0": "198.18.0.0/15", "198.19.255.255": "198.18.0.0/15",
		"198.51.100.0": "198.51.100.0/24", "198.51.100.255": "198.51.100.0/24",
		"203.0.113.0": "203.0.113.0/24", "203.0.113.1": "203.0.113.0/24", "203.0.113.255": "203.0.113.0/24",
		"224.0.0.0": "224.0.0.0/4", "239.255.255.255": "224.0.0.0/4",
		"240.0.0.0": "240.0.0.0/4", "255.255.255.254": "240.0.0.0/4", "255.255.255.255": "255.255.255.255/32",
		// IPv6
		"::": "::/128", "::1": "::1/128", "::2": "::/96", "::a9fe:a9fe": "::/96",
		"::ffff:0:0": "::ffff:0.0.0.0/96", "::ffff:1.1.1.1": "::ffff:0.0.0.0/96", "::ffff:192.0.2.2": "::ffff:0.0.0.0/96", "::ffff:ffff:ffff": "::ffff:0.0.0.0/96",
		"64:ff9b::": "64:ff9b::/96", "64:ff9b::808:808": "64:ff9b::/96", "64:ff9b::ffff:ffff": "64:ff9b::/96",
		"64:ff9b:1::": "64:ff9b:1::/48", "64:ff9b:1:ffff:ffff:ffff:ffff:ffff": "64:ff9b:1::/48",
		"100::": "100::/64", "100::ffff:ffff:ffff:ffff": "100::/64",
		"100:0:0:1::": "100:0:0:1::/64", "100:0:0:1:ffff:ffff:ffff:ffff": "100:0:0:1::/64",
		"2001::": "2001::/32", "2001:0:4136:e378:8000:63bf:3fff:fdd2": "2001::/32", "2001:0:ffff:ffff:ffff:ffff:ffff:ffff": "2001::/32",
		"2001:1::1": "2001:1::1/128", "2001:1::2": "2001:1::2/128", "2001:1::3": "2001:1::3/128", "2001:1::4": "2001::/23",
		"2001:2::": "2001:2::/48", "2001:2:0:ffff:ffff:ffff:ffff:ffff": "2001:2::/48",
		"2001:3::": "2001:3::/32", "2001:3:ffff:ffff:ffff:ffff:ffff:ffff": "2001:3::/32",
		"2001:4:112::": "2001:4:112::/48", "2001:4:112:ffff:ffff:ffff:ffff:ffff": "2001:4:112::/48",
		"2001:10::": "2001:10::/28", "2001:1f:ffff:ffff:ffff:ffff:ffff:ffff": "2001:10::/28",
		"2001:20::": "2001:20::/28", "2001:2f:ffff:ffff:ffff:ffff:ffff:ffff": "2001:20::/28",
		"2001:30::": "2001:30::/28", "2001:3f:ffff:ffff:ffff:ffff:ffff:ffff": "2001:30::/28",
		"2001:40::": "2001::/23", "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff": "2001::/23",
		"2001:db8::": "2001:db8::/32", "2001:db8::1": "2001:db8::/32", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff": "2001:db8::/32",
		"2002::": "2002::/16", "2002:c000:202::1": "2002::/16", "2002:808:808::1": "2002::/16", "2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff": "2002::/16",
		"2620:4f:8000::": "2620:4f:8000::/48", "2620:4f:8000:ffff:ffff:ffff:ffff:ffff": "2620:4f:8000::/48",
		"3fff::": "3fff::/20", "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff": "3fff::/20",
		"5f00::": "5f00::/16", "5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff": "5f00::/16",
		"fc00::": "fc00::/7", "fd00:ec2::254": "fd00:ec2::254/128", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff": "fc00::/7",
		"fe80::": "fe80::/10", "fe80::1%eth0": "fe80::/10", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff": "fe80::/10",
		"fec0::": "fec0::/10", "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff": "fec0::/10",
		"ff00::": "ff00::/8", "ff02::1": "ff00::/8", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff": "ff00::/8",
		// Outside 2000::/3, in no block of the registry.
		"1::": "2000::/3", "4000::": "2000::/3", "5eff:ffff:ffff:ffff:ffff:ffff:ffff:ffff": "2000::/3", "8000::": "2000::/3",
	}
	for s, want := range refused {
		r := CheckWebhookAddress(netip.MustParseAddr(s), false)
		if r == nil {
			t.Errorf("%s: accepted, want refused as in %s", s, want)
			continue
		}
		if got := r.Range.Prefix.String(); got != want {
			t.Errorf("%s: refused as in %s, want %s", s, got, want)
		}
		if msg := r.String(); !strings.Contains(msg, want+" (") {
			t.Errorf("%s: %q does not name %s", s, msg, want)
		}
	}
	for _, s := range []string{
		"1.0.0.0", "1.1.1.1", "8.8.8.8", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0",
		"126.255.255.255", "128.0.0.0", "169.253.255.255", "169.255.0.0", "172.15.255.255", "172.32.0.0",
		"191.255.255.255", "192.0.1.255", "192.0.3.0", "192.31.195.255", "192.31.197.0", "192.52.192.255", "192.52.194.0",
		"192.88.98.255", "192.88.100.0", "192.167.255.255", "192.169.0.0", "192.175.47.255", "192.175.49.0",
		"198.17.255.255", "198.20.0.0", "198.51.99.255", "198.51.101.0", "203.0.112.255", "203.0.114.0", "223.255.255.255",
		"2000::", "2001:200::", "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db9::", "2003::", "2606:4700:4700::1111",
		"2620:4f:7fff:ffff:ffff:ffff:ffff:ffff", "2620:4f:8001::", "3ffe:ffff::", "3fff:1000::",
	} {
		if r := CheckWebhookAddress(netip.MustParseAddr(s), false); r != nil {
			t.Errorf("%s: refused (%s), want accepted", s, r)
		}
	}
}

// TestCheckWebhookAddress_Carried checks that the IPv6 forms carrying an
// IPv4 address are refused whatever that address, and name it, with its
// block when it is refused too; and that the loopback development flag
// allows 127.0.0.0/8 and ::1 alone.
func TestCheckWebhookAddress_Carried(t *testing.T) {
	for s, want := range map[string]string{
		"::ffff:1.1.1.1":                       "::ffff:1.1.1.1 is in ::ffff:0.0.0.0/96 (IPv4-mapped), a form of the IPv4 address 1.1.1.1",
		"::ffff:192.0.2.2":                     "a form of the IPv4 address 192.0.2.2, which is in 192.0.2.0/24 (documentation, TEST-NET-1)",
		"::127.0.0.1":                          "::/96 (IPv4-compatible, deprecated), a form of the IPv4 address 127.0.0.1, which is in 127.0.0.0/8 (loopback)",
		"64:ff9b::a9fe:a9fe":                   "the IPv4 address 169.254.169.254, which is in 169.254.0.0/16",
		"2002:c000:202::1":                     "2002::/16 (6to4), a form of the IPv4 address 192.0.2.2, which is in 192.0.2.0/24",
		"2002:808:808::1":                      "2002::/16 (6to4), a form of the IPv4 address 8.8.8.8",
		"2001:0:4136:e378:8000:63bf:f5ff:fffd": "2001::/32 (Teredo), a form of the IPv4 address 10.0.0.2, which is in 10.0.0.0/8 (private use)",
	} {
		r := CheckWebhookAddress(netip.MustParseAddr(s), false)
		if r == nil || !strings.Contains(r.String(), want) {
			t.Errorf("%s: %v, want it to say %q", s, r, want)
		}
	}
	for s, allowed := range map[string]bool{
		"127.0.0.1": true, "127.1.2.3": true, "::1": true,
		"::ffff:127.0.0.1": false, "::127.0.0.1": false, "2002:7f00:1::": false, "10.0.0.1": false, "0.0.0.0": false, "::": false,
	} {
		if got := CheckWebhookAddress(netip.MustParseAddr(s), true) == nil; got != allowed {
			t.Errorf("%s with the loopback flag: allowed %v, want %v", s, got, allowed)
		}
	}
}

// FuzzCheckWebhookAddress checks the address rule on any address: an
// accepted one is a global unicast address the standard library does not
// call private, loopback, link-local, multicast or unspecified, is in no
// block of either table, and carries no IPv4 address; its IPv4-mapped form
// is refused; and POST /recall/webhooks's URL check agrees with it.
func FuzzCheckWebhookAddress(f *testing.F) {
	for _, s := range []string{"8.8.8.8", "192.0.2.2", "203.0.113.1", "::ffff:1.1.1.1", "2002:c000:202::1", "2001:db8::1",
		"2606:4700:4700::1111", "fe80::1%eth0", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "64:ff9b::1", "127.0.0.1", "::"} {
		f.Add(netip.MustParseAddr(s).AsSlice(), false)
	}
	f.Fuzz(func(t *testing.T, raw []byte, loopback bool) {
		a, ok := netip.AddrFromSlice(raw)
		if !ok {
			return
		}
		r := CheckWebhookAddress(a, loopback)
		url := "https://" + a.String() + "/"
		if a.Is6() {
			url = "https://[" + a.String() + "]/"
		}
		if why, bad := checkWebhookURL(url, idn.Names{}, loopback); bad != (r != nil) {
			t.Fatalf("%s: the URL check says %v (%s), the address check %v", a, bad, why, r)
		}
		if r != nil {
			if msg := r.String(); !strings.HasPrefix(msg, a.String()+" is ") {
				t.Fatalf("%s: refusal %q does not start with the address", a, msg)
			}
			return
		}
		if loopback && a.IsLoopback() {
			return
		}
		if !a.IsGlobalUnicast() || a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsMulticast() || a.IsUnspecified() {
			t.Fatalf("%s accepted, but the standard library does not call it public", a)
		}
		for _, table := range [][]AddressRange{RefusedRanges4, RefusedRanges6} {
			for _, rg := range table {
				if rg.Prefix.Contains(a) {
					t.Fatalf("%s accepted, though in %s", a, rg)
				}
			}
		}
		if _, carries := CarriedIPv4(a); carries {
			t.Fatalf("%s accepted, though it carries an IPv4 address", a)
		}
		if a.Is4() && CheckWebhookAddress(netip.AddrFrom16(a.As16()), loopback) == nil {
			t.Fatalf("the IPv4-mapped form of %s was accepted", a)
		}
	})
}
