package rappel

import (
	"net/netip"
	"strings"
	"syscall"
)

// Which addresses a webhook delivery may connect to (docs/api.md, "Which
// addresses rappel posts to"): none of the IANA IPv4 and IPv6
// Special-Purpose Address Registries, nor multicast, nor IPv6 outside the
// global unicast space 2000::/3. The same check runs when an endpoint is
// registered (on a literal address in its URL) and when connecting (on
// every address a name resolves to). The documents a plugin's manifest
// names are fetched under the same rule (docs/operations.md, "Plugins'
// documents"): both are URLs the operator did not write.

// AddressRange is a block of addresses a webhook may not reach, with the
// name the registry gives it.
type AddressRange struct {
	Prefix netip.Prefix
	Name   string
}

func (r AddressRange) String() string { return r.Prefix.String() + " (" + r.Name + ")" }

// ranges parses a table of prefix and name pairs.
func ranges(table ...string) []AddressRange {
	out := make([]AddressRange, 0, len(table)/2)
	for i := 0; i < len(table); i += 2 {
		out = append(out, AddressRange{Prefix: netip.MustParsePrefix(table[i]), Name: table[i+1]})
	}
	return out
}

// RefusedRanges4 is the IANA IPv4 Special-Purpose Address Registry, whole
// (blocks marked globally reachable, such as the AS112 and AMT anycast
// ones, included: no webhook receiver lives there), with multicast.
var RefusedRanges4 = ranges(
	"0.0.0.0/8", "this network",
	"0.0.0.0/32", "this host on this network",
	"10.0.0.0/8", "private use",
	"100.64.0.0/10", "shared address space, carrier-grade NAT",
	"127.0.0.0/8", "loopback",
	"169.254.0.0/16", "link-local, which holds the cloud metadata address 169.254.169.254",
	"172.16.0.0/12", "private use",
	"192.0.0.0/24", "IETF protocol assignments",
	"192.0.0.0/29", "IPv4 service continuity prefix",
	"192.0.0.8/32", "IPv4 dummy address",
	"192.0.0.9/32", "Port Control Protocol anycast",
	"192.0.0.10/32", "TURN anycast",
	"192.0.0.170/32", "NAT64/DNS64 discovery",
	"192.0.0.171/32", "NAT64/DNS64 discovery",
	"192.0.2.0/24", "documentation, TEST-NET-1",
	"192.31.196.0/24", "AS112-v4",
	"192.52.193.0/24", "AMT",
	"192.88.99.0/24", "deprecated 6to4 relay anycast",
	"192.168.0.0/16", "private use",
	"192.175.48.0/24", "direct delegation AS112 service",
	"198.18.0.0/15", "benchmarking",
	"198.51.100.0/24", "documentation, TEST-NET-2",
	"203.0.113.0/24", "documentation, TEST-NET-3",
	"224.0.0.0/4", "multicast",
	"240.0.0.0/4", "reserved",
	"255.255.255.255/32", "limited broadcast",
)

// RefusedRanges6 is the IANA IPv6 Special-Purpose Address Registry, whole,
// with multicast, the deprecated site-local and IPv4-compatible blocks,
// and AWS's metadata address (in fc00::/7 already; listed so that the
// refusal names it).
var RefusedRanges6 = ranges(
	"::/128", "unspecified",
	"::1/128", "loopback",
	"::/96", "IPv4-compatible, deprecated",
	"::ffff:0:0/96", "IPv4-mapped",
	"64:ff9b::/96", "NAT64, IPv4-IPv6 translation",
	"64:ff9b:1::/48", "local-use IPv4-IPv6 translation",
	"100::/64", "discard-only",
	"100:0:0:1::/64", "dummy IPv6 prefix",
	"2001::/23", "IETF protocol assignments",
	"2001::/32", "Teredo",
	"2001:1::1/128", "Port Control Protocol anycast",
	"2001:1::2/128", "TURN anycast",
	"2001:1::3/128", "DNS-SD service registration anycast",
	"2001:2::/48", "benchmarking",
	"2001:3::/32", "AMT",
	"2001:4:112::/48", "AS112-v6",
	"2001:10::/28", "deprecated ORCHID",
	"2001:20::/28", "ORCHIDv2",
	"2001:30::/28", "drone remote ID entity tags",
	"2001:db8::/32", "documentation",
	"2002::/16", "6to4",
	"2620:4f:8000::/48", "direct delegation AS112 service",
	"3fff::/20", "documentation",
	"5f00::/16", "segment routing (SRv6) SIDs",
	"fc00::/7", "unique local",
	"fd00:ec2::254/128", "AWS instance metadata",
	"fe80::/10", "link-local",
	"fec0::/10", "site-local, deprecated",
	"ff00::/8", "multicast",
)

// globalUnicast6 is the only IPv6 block IANA allocates for global unicast:
// an address outside it reaches nothing a webhook receiver could be.
var globalUnicast6 = AddressRange{Prefix: netip.MustParsePrefix("2000::/3"), Name: "global unicast"}

// RefusedAddress says why a webhook may not reach Addr.
type RefusedAddress struct {
	Addr netip.Addr
	// Range is the most specific refused block holding Addr; for an IPv6
	// address outside 2000::/3 it is 2000::/3 itself, with Outside set.
	Range   AddressRange
	Outside bool
	// Carried is the IPv4 address an IPv6 form carries (IPv4-mapped,
	// IPv4-compatible, 6to4, NAT64, Teredo), invalid when none; CarriedIn
	// is its refused block, nil when that IPv4 address is public.
	Carried   netip.Addr
	CarriedIn *AddressRange
}

// String says it as a clause: "192.0.2.2 is in 192.0.2.0/24
// (documentation, TEST-NET-1)".
func (r *RefusedAddress) String() string {
	var b strings.Builder
	b.WriteString(r.Addr.String())
	if r.Outside {
		b.WriteString(" is outside " + r.Range.String())
	} else {
		b.WriteString(" is in " + r.Range.String())
	}
	if r.Carried.IsValid() {
		b.WriteString(", a form of the IPv4 address " + r.Carried.String())
		if r.CarriedIn != nil {
			b.WriteString(", which is in " + r.CarriedIn.String())
		}
	}
	return b.String()
}

// CheckWebhookAddress returns why a webhook delivery may not connect to a,
// or nil when it may. With allowLoopback (--webhooks-allow-http-loopback)
// 127.0.0.0/8 and ::1 are allowed, written as such: their IPv6 forms
// (::ffff:127.0.0.1) stay refused. A zone (fe80::1%eth0) is ignored: the
// address is judged without it.
func CheckWebhookAddress(a netip.Addr, allowLoopback bool) *RefusedAddress {
	a = a.WithZone("")
	if !a.IsValid() || (allowLoopback && a.IsLoopback() && !a.Is4In6()) {
		return nil
	}
	if a.Is4() {
		if in := longestMatch(RefusedRanges4, a); in != nil {
			return &RefusedAddress{Addr: a, Range: *in}
		}
		return nil
	}
	r := &RefusedAddress{Addr: a}
	if in := longestMatch(RefusedRanges6, a); in != nil {
		r.Range = *in
	} else if !globalUnicast6.Prefix.Contains(a) {
		r.Range, r.Outside = globalUnicast6, true
	} else {
		return nil
	}
	// Every IPv6 form that carries an IPv4 address is refused as a block
	// already; the IPv4 address is judged too, so that the refusal names
	// it and so that dropping a block from the table cannot let a private
	// address through.
	if v4, ok := CarriedIPv4(a); ok {
		r.Carried, r.CarriedIn = v4, longestMatch(RefusedRanges4, v4)
	}
	return r
}

// longestMatch returns the most specific range of table holding a, or nil.
func longestMatch(table []AddressRange, a netip.Addr) *AddressRange {
	var best *AddressRange
	for i := range table {
		if table[i].Prefix.Contains(a) && (best == nil || table[i].Prefix.Bits() > best.Prefix.Bits()) {
			best = &table[i]
		}
	}
	return best
}

// Blocks of the IPv6 forms that carry an IPv4 address at a fixed place.
var (
	mapped4    = netip.MustParsePrefix("::ffff:0:0/96")
	compat4    = netip.MustParsePrefix("::/96")
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour  = netip.MustParsePrefix("2002::/16")
	teredoNets = netip.MustParsePrefix("2001::/32")
)

// CarriedIPv4 returns the IPv4 address an IPv6 address carries, and
// whether it carries one: the last 32 bits of an IPv4-mapped,
// IPv4-compatible (but :: and ::1) or NAT64 (64:ff9b::/96) address, bits
// 16 to 47 of a 6to4 address, and the inverted last 32 bits of a Teredo
// address (its client's public address). Local-use NAT64 (64:ff9b:1::/48)
// places the IPv4 address where the network chooses; it is refused as a
// block alone.
func CarriedIPv4(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() {
		return netip.Addr{}, false
	}
	b := a.As16()
	last := [4]byte{b[12], b[13], b[14], b[15]}
	switch {
	case mapped4.Contains(a), nat64.Contains(a):
		return netip.AddrFrom4(last), true
	case compat4.Contains(a):
		if a == netip.IPv6Unspecified() || a == netip.IPv6Loopback() {
			return netip.Addr{}, false
		}
		return netip.AddrFrom4(last), true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	case teredoNets.Contains(a):
		return netip.AddrFrom4([4]byte{^last[0], ^last[1], ^last[2], ^last[3]}), true
	}
	return netip.Addr{}, false
}

// RefusedAddressError is a connection refused because of its address, or
// a URL refused because of its host, by DialControl or CheckHost.
type RefusedAddressError struct {
	// Addr is the address dialed (host and port), or the URL's host.
	Addr string
	// Why says which refused block holds it; nil for an address that
	// does not parse, or a host written as a number in another form than
	// an IP address's (CheckHost).
	Why *RefusedAddress
	// Who is what may not reach it, in the message: "a webhook".
	Who string
}

func (e *RefusedAddressError) Error() string {
	var b strings.Builder
	b.WriteString("refused to connect to " + e.Addr + ": ")
	if e.Why == nil {
		b.WriteString("neither a host name nor an IP address in its usual form (a.b.c.d, or IPv6 in brackets)")
	} else {
		b.WriteString(e.Why.String())
	}
	if e.Who != "" {
		b.WriteString(", which " + e.Who + " may not reach")
	}
	return b.String()
}

// DialControl returns a net.Dialer's Control that refuses every address
// CheckWebhookAddress refuses (with allowLoopback, loopback passes). It
// sees the address being dialed, after name resolution: the one place
// that sees every address a client reaches, a name that re-resolves to
// another address (DNS rebinding) or a redirect's included. who names the
// client in its errors (RefusedAddressError.Who).
func DialControl(allowLoopback bool, who string) func(network, address string, c syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return &RefusedAddressError{Addr: address, Who: who}
		}
		if why := CheckWebhookAddress(ap.Addr(), allowLoopback); why != nil {
			return &RefusedAddressError{Addr: address, Why: why, Who: who}
		}
		return nil
	}
}

// CheckHost refuses, before dialing, a URL's host (u.Hostname()) that is
// an address written in a form CheckWebhookAddress refuses, or a number
// written otherwise than as an IP address (0x7f000001, 2130706433,
// 0177.0.0.1), which some resolvers read as an address and others look
// up: DialControl alone would judge the IPv4 address an IPv4-mapped one
// (::ffff:127.0.0.1) maps, which allowLoopback lets through. A name
// returns nil: DialControl checks what it resolves to.
func CheckHost(host string, allowLoopback bool, who string) *RefusedAddressError {
	if a, err := netip.ParseAddr(host); err == nil {
		if why := CheckWebhookAddress(a, allowLoopback); why != nil {
			return &RefusedAddressError{Addr: host, Why: why, Who: who}
		}
		return nil
	}
	if numericName(host) {
		return &RefusedAddressError{Addr: host, Who: who}
	}
	return nil
}
