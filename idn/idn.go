// Package idn converts internationalized domain names to their ASCII
// (A-label, xn--…) form for the domain package, which names what it needs
// (rappel.DomainNames) and imports the standard library only: the IDNA
// tables live in golang.org/x/net/idna, which is imported here.
//
// The package imports nothing of the module, so that the domain's own
// tests can use it.
package idn

import "golang.org/x/net/idna"

// Names is the IDNA conversion the service uses; it meets
// rappel.DomainNames.
type Names struct{}

// emailProfile converts a mail domain: UTS #46 mapping for lookup (case
// folded, full-width letters mapped), IDNA2008 label rules (no hyphens in
// the third and fourth places, joiners only where a script needs them),
// the bidi rule and DNS lengths.
var emailProfile = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.VerifyDNSLength(true), idna.Transitional(false))

// EmailDomain returns domain in the form mail is sent to: its lower-case
// A-label form under emailProfile. The error says why it has none; its
// text begins with "idna: ".
func (Names) EmailDomain(domain string) (string, error) { return emailProfile.ToASCII(domain) }

// HostALabel returns host's A-label form as resolvers look it up (the
// UTS #46 lookup profile).
func (Names) HostALabel(host string) (string, error) { return idna.Lookup.ToASCII(host) }
