package rappel

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
)

// Agency is an agency recalls come from, named in both languages. The
// built-in ones are the spec's three; a plugin for a new source may name
// another in its manifest (see RegisterAgency), which the agency filter,
// the statistics and the API description then know too.
type Agency struct {
	// Name is the value of a record's agency field and of the
	// recall_agency filter: for the built-in agencies, the spec's.
	Name string `json:"name"`
	// EN and FR are the agency's full names in English and French.
	EN string `json:"en"`
	FR string `json:"fr"`
}

// builtinAgencies are the spec's agencies, in the spec's order.
var builtinAgencies = []Agency{
	{AgencyCFIA, "Canadian Food Inspection Agency", "Agence canadienne d'inspection des aliments"},
	{AgencyHealthCanada, "Health Canada", "Santé Canada"},
	{AgencyTransportCanada, "Transport Canada", "Transports Canada"},
}

// agencies is every agency known to the process: the built-in ones, then
// those registered, in the order they were first registered. It is
// replaced whole on every change (under registerMu), so that readers
// (every record validated, every filter parsed) take no lock.
var agencies atomic.Pointer[[]Agency]

func init() {
	list := slices.Clone(builtinAgencies)
	agencies.Store(&list)
}

// AllAgencies returns every agency known: the spec's, then those manifests
// registered.
func AllAgencies() []Agency { return slices.Clone(*agencies.Load()) }

// KnownAgencies returns the agency vocabulary: the spec's agencies (the
// Agencies vocabulary), then those registered by plugin manifests. Record
// validation, the agency filter and the statistics use it.
func KnownAgencies() Vocabulary {
	list := *agencies.Load()
	v := make(Vocabulary, len(list))
	for i, a := range list {
		v[i] = a.Name
	}
	return v
}

// IsAgency reports whether name is a known agency's Name.
func IsAgency(name string) bool {
	for _, a := range *agencies.Load() {
		if a.Name == name {
			return true
		}
	}
	return false
}

// registerMu serializes registrations (readers take no lock), and
// registrants names, by agency name, the source whose manifest registered
// the agency first: its names are the agency's (RegisterSourceAgency).
var (
	registerMu  sync.Mutex
	registrants = map[string]string{}
)

// RegisterAgency makes a known, as a fleet's follower mirrors its leader's
// list; registering a known name again updates its full names, except for
// a built-in agency, whose names are the spec's and are kept. A source's
// manifest registers with RegisterSourceAgency. It fails when a is not
// valid (see Agency.Validate) or its name differs from a known one only in
// case or spacing, which a filter could not tell apart.
func RegisterAgency(a Agency) error {
	registerMu.Lock()
	defer registerMu.Unlock()
	list := slices.Clone(*agencies.Load())
	i := slices.IndexFunc(list, func(k Agency) bool { return k.Name == a.Name })
	if err := a.Validate(); err != nil {
		return err
	}
	switch {
	case i >= 0 && i < len(builtinAgencies):
		return nil
	case i >= 0:
		list[i] = a
	default:
		return appendAgency(list, a)
	}
	agencies.Store(&list)
	return nil
}

// RegisterSourceAgency registers a, the agency the manifest of source
// names, and returns a sentence (empty when there is none to say) saying
// which of a's names were ignored. An agency's full names are its first
// registrant's: the spec's for a built-in agency, else the first source's
// to register it, which may change them later; another source naming the
// agency with other names does not replace them, and the sentence says so.
// A known name without full names refers to that agency and registers
// nothing. It fails as RegisterAgency does.
func RegisterSourceAgency(source string, a Agency) (ignored string, err error) {
	registerMu.Lock()
	defer registerMu.Unlock()
	list := slices.Clone(*agencies.Load())
	i := slices.IndexFunc(list, func(k Agency) bool { return k.Name == a.Name })
	if i < 0 {
		if err := a.Validate(); err != nil {
			return "", err
		}
		if err := appendAgency(list, a); err != nil {
			return "", err
		}
		registrants[a.Name] = source
		return "", nil
	}
	k := list[i]
	if a.EN == "" && a.FR == "" || a.EN == k.EN && a.FR == k.FR {
		return "", nil
	}
	owner := registrants[a.Name]
	if i >= len(builtinAgencies) && owner == source {
		if err := a.Validate(); err != nil {
			return "", err
		}
		list[i] = a
		agencies.Store(&list)
		return "", nil
	}
	whose := "the spec's"
	switch {
	case owner != "":
		whose = fmt.Sprintf("those of the source %s, which registered it first", owner)
	case i >= len(builtinAgencies):
		whose = "those it was first registered with"
	}
	return fmt.Sprintf("The manifest names the agency %q %q in English and %q in French, but its names are %s (%q, %q): the manifest's are ignored; name the agency by its name alone, or with the names it has.",
		a.Name, a.EN, a.FR, whose, k.EN, k.FR), nil
}

// appendAgency stores list with a, a new agency, added; a name too like a
// known one is refused. registerMu must be held.
func appendAgency(list []Agency, a Agency) error {
	for _, k := range list {
		if foldName(k.Name) == foldName(a.Name) {
			return fmt.Errorf("agency %q is too like the known agency %q: use %q to name it, or a name of its own", a.Name, k.Name, k.Name)
		}
	}
	list = append(list, a)
	agencies.Store(&list)
	return nil
}

// foldName is an agency name as a filter compares it: lower case, spaces
// and punctuation dropped.
func foldName(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, s)
}

// Validate reports the first reason a cannot be registered, in a sentence
// that says how to fix it. A name is 2 to 64 characters of letters, digits,
// spaces and . & ' ( ) -, starting with a letter or digit; the full names
// are 1 to 200 characters of printable text.
func (a Agency) Validate() error {
	n := utf8.RuneCountInString(a.Name)
	switch {
	case !utf8.ValidString(a.Name) || n < 2 || n > 64:
		return fmt.Errorf("the agency name %q must be 2 to 64 characters, such as \"FDA\"", a.Name)
	case strings.TrimSpace(a.Name) != a.Name || strings.Contains(a.Name, "  "):
		return fmt.Errorf("the agency name %q has spaces at an end or two in a row; write it as it is printed", a.Name)
	}
	for i, r := range a.Name {
		ok := unicode.IsLetter(r) || unicode.IsDigit(r) || i > 0 && strings.ContainsRune(" .&'()-", r)
		if !ok {
			return fmt.Errorf("the agency name %q holds %q; use letters, digits, spaces and . & ' ( ) - only, starting with a letter or digit", a.Name, r)
		}
	}
	for _, f := range []struct{ lang, v string }{{"English", a.EN}, {"French", a.FR}} {
		n := utf8.RuneCountInString(f.v)
		if !utf8.ValidString(f.v) || strings.TrimSpace(f.v) == "" || n > 200 {
			return fmt.Errorf("agency %q needs its full name in %s, 1 to 200 characters", a.Name, f.lang)
		}
		if strings.IndexFunc(f.v, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
			return fmt.Errorf("the %s name of agency %q holds a control character; give it as printed text", f.lang, a.Name)
		}
	}
	return nil
}
