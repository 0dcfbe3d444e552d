// Package apicompat holds the API's versioning rules (docs/api.md,
// "Versioning and deprecation") as code: the version in the OpenAPI
// document, the form of CHANGELOG.md, and the check that the document
// breaks no client of the last release unless its major version moved and
// the changelog says what broke.
//
// The breaking changes are oasdiff's (github.com/oasdiff/oasdiff, pinned in
// go.mod), those of its checks at level ERR. Only tests and `go tool
// oasdiff` use the package: the binary does not link it.
package apicompat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oasdiff/oasdiff/checker"
	"github.com/oasdiff/oasdiff/diff"
	"github.com/oasdiff/oasdiff/load"
)

// Version is a released version of the API, SemVer's MAJOR.MINOR.PATCH
// (no pre-release or build part: the document names releases only).
type Version struct{ Major, Minor, Patch int }

// versionPattern is Version's text: numbers without leading zeros.
var versionPattern = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)

// ParseVersion reads a version written MAJOR.MINOR.PATCH.
func ParseVersion(s string) (Version, error) {
	m := versionPattern.FindStringSubmatch(s)
	if m == nil {
		return Version{}, fmt.Errorf("version %q is not MAJOR.MINOR.PATCH (such as 1.2.0)", s)
	}
	var v [3]int
	for i := range v {
		n, err := strconv.Atoi(m[i+1])
		if err != nil {
			return Version{}, fmt.Errorf("version %q: %w", s, err)
		}
		v[i] = n
	}
	return Version{v[0], v[1], v[2]}, nil
}

// String writes v as MAJOR.MINOR.PATCH.
func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// Compare returns -1, 0 or +1 as v is older than, the same as or newer
// than o.
func (v Version) Compare(o Version) int {
	for _, d := range [3]int{v.Major - o.Major, v.Minor - o.Minor, v.Patch - o.Patch} {
		if d != 0 {
			return max(-1, min(1, d))
		}
	}
	return 0
}

// DocumentVersion returns the info.version of an OpenAPI document.
func DocumentVersion(doc []byte) (Version, error) {
	var d struct {
		Info struct {
			Version string `json:"version"`
		} `json:"info"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return Version{}, fmt.Errorf("the OpenAPI document is not JSON: %w", err)
	}
	return ParseVersion(d.Info.Version)
}

// Sections are the sections a changelog entry may hold, in Keep a
// Changelog's order.
var Sections = []string{"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}

// BreakingMarker starts a bullet of an entry's Changed or Removed section
// that says what a release breaks.
const BreakingMarker = "**BREAKING**"

// Entry is one version's entry of the changelog.
type Entry struct {
	// Version is the release; zero for the Unreleased entry.
	Version Version
	// Date is the release's day; zero for the Unreleased entry.
	Date time.Time
	// Sections holds each section's bullets, a bullet's lines joined with
	// spaces, without the "- ".
	Sections map[string][]string
}

// Breaking returns the bullets of e's Changed and Removed sections that
// start with BreakingMarker.
func (e Entry) Breaking() []string {
	var out []string
	for _, s := range []string{"Changed", "Removed"} {
		for _, b := range e.Sections[s] {
			if strings.HasPrefix(b, BreakingMarker) {
				out = append(out, b)
			}
		}
	}
	return out
}

// Changelog is CHANGELOG.md read: its Unreleased entry and its releases,
// newest first.
type Changelog struct {
	Unreleased Entry
	Releases   []Entry
}

// Release returns the entry of v, false when the changelog has none.
func (c *Changelog) Release(v Version) (Entry, bool) {
	i := slices.IndexFunc(c.Releases, func(e Entry) bool { return e.Version == v })
	if i < 0 {
		return Entry{}, false
	}
	return c.Releases[i], true
}

// Lines of CHANGELOG.md that are not prose: a release's heading, "## [1.2.0] -
// 2027-01-15", and a link reference.
var (
	releaseHeading = regexp.MustCompile(`^## \[([^\]]+)\] - (\d{4}-\d{2}-\d{2})$`)
	// linkReference is a reference definition at the end, "[1.0.0]: URL".
	linkReference = regexp.MustCompile(`^\[[^\]]+\]: \S+$`)
)

// ParseChangelog reads a changelog in Keep a Changelog's form: a title and
// an introduction, "## [Unreleased]", then "## [MAJOR.MINOR.PATCH] -
// YYYY-MM-DD" entries, newest first, each of "### Added", "Changed",
// "Deprecated", "Removed", "Fixed" or "Security" sections (each once, in
// that order) of "- " bullets. Anything else is an error naming its line.
func ParseChangelog(b []byte) (*Changelog, error) {
	c := &Changelog{}
	var entry *Entry
	var section string
	var errs []error
	bad := func(n int, format string, args ...any) {
		errs = append(errs, fmt.Errorf("CHANGELOG.md:%d: "+format, append([]any{n}, args...)...))
	}
	sawUnreleased, references := false, false
	for i, line := range strings.Split(string(bytes.TrimRight(b, "\n")), "\n") {
		n := i + 1
		switch {
		case strings.TrimSpace(line) == "":
			continue
		case linkReference.MatchString(line):
			references = true
			continue
		case references:
			bad(n, "%q follows the link references, which end the file", line)
			continue
		case line == "## [Unreleased]":
			if sawUnreleased || len(c.Releases) > 0 {
				bad(n, "## [Unreleased] comes once, before every release")
			}
			sawUnreleased, entry, section = true, &c.Unreleased, ""
			entry.Sections = map[string][]string{}
			continue
		case strings.HasPrefix(line, "## "):
			m := releaseHeading.FindStringSubmatch(line)
			if m == nil {
				bad(n, "heading %q is not \"## [MAJOR.MINOR.PATCH] - YYYY-MM-DD\" (or \"## [Unreleased]\")", line)
				entry = nil
				continue
			}
			v, err := ParseVersion(m[1])
			date, derr := time.Parse(time.DateOnly, m[2])
			if err != nil || derr != nil {
				bad(n, "heading %q: %v", line, errors.Join(err, derr))
				entry = nil
				continue
			}
			if !sawUnreleased {
				bad(n, "## [Unreleased] must come before the first release")
				sawUnreleased = true
			}
			if k := len(c.Releases); k > 0 {
				prev := c.Releases[k-1]
				if v.Compare(prev.Version) >= 0 {
					bad(n, "%s comes after %s: releases go newest first, each version once", v, prev.Version)
				}
				if date.After(prev.Date) {
					bad(n, "%s is dated %s, after %s's %s", v, m[2], prev.Version, prev.Date.Format(time.DateOnly))
				}
			}
			c.Releases = append(c.Releases, Entry{Version: v, Date: date, Sections: map[string][]string{}})
			entry, section = &c.Releases[len(c.Releases)-1], ""
			continue
		case strings.HasPrefix(line, "### "):
			name := strings.TrimPrefix(line, "### ")
			at := slices.Index(Sections, name)
			switch {
			case entry == nil:
				bad(n, "section %q comes before any entry", name)
				continue
			case at < 0:
				bad(n, "section %q is not one of %s", name, strings.Join(Sections, ", "))
			case entry.Sections[name] != nil:
				bad(n, "section %s comes twice in one entry", name)
			case section != "" && at < slices.Index(Sections, section):
				bad(n, "section %s comes after %s; the order is %s", name, section, strings.Join(Sections, ", "))
			}
			section = name
			entry.Sections[name] = []string{}
			continue
		case strings.HasPrefix(line, "# ") && !sawUnreleased:
			continue // the title
		case strings.HasPrefix(line, "#"):
			bad(n, "heading %q is not an entry's (##) or a section's (###)", line)
			continue
		}
		if entry == nil {
			continue // the title and the introduction
		}
		switch {
		case section == "":
			bad(n, "%q is outside a section; put it under ### %s", line, strings.Join(Sections, ", ### "))
		case strings.HasPrefix(line, "- "):
			entry.Sections[section] = append(entry.Sections[section], strings.TrimPrefix(line, "- "))
		case strings.HasPrefix(line, "  ") && len(entry.Sections[section]) > 0:
			bullets := entry.Sections[section]
			bullets[len(bullets)-1] += " " + strings.TrimSpace(line)
		default:
			bad(n, "%q is not a bullet (\"- \") or a bullet's indented continuation", line)
		}
	}
	if !sawUnreleased {
		errs = append(errs, errors.New("CHANGELOG.md has no \"## [Unreleased]\" heading"))
	}
	for _, e := range c.Releases {
		if len(e.Sections) == 0 {
			errs = append(errs, fmt.Errorf("CHANGELOG.md: release %s has no section; say what it added, changed or fixed", e.Version))
		}
	}
	return c, errors.Join(errs...)
}

// Change is one breaking change oasdiff finds.
type Change struct {
	// ID is the check's, such as "api-path-removed-without-deprecation".
	ID string
	// Operation and Path are the operation the change is in ("GET",
	// "/recall/stats"); empty for one about a component.
	Operation, Path string
	// Text says the change, in oasdiff's words.
	Text string
}

// String writes the change as the check's failures list it.
func (c Change) String() string {
	return strings.TrimSpace(c.Operation+" "+c.Path) + ": " + c.Text + " [" + c.ID + "]"
}

// tolerated are oasdiff's checks that rate as breaking what the versioning
// policy calls compatible (docs/api.md, "Versioning and deprecation"): a
// new value of an enum a response holds, which clients must read as
// "other". They are warnings here.
var tolerated = map[string]checker.Level{
	checker.ResponsePropertyEnumValueAddedId:          checker.WARN,
	checker.ResponseMediaTypeEnumValueAddedId:         checker.WARN,
	checker.ResponseWriteOnlyPropertyEnumValueAddedId: checker.WARN,
}

// BreakingChanges returns the changes from baseline to current that
// break a client of baseline: oasdiff's of level ERR, but those the policy
// tolerates.
func BreakingChanges(baseline, current []byte) ([]Change, error) {
	// A loader a document: its cache is keyed by the document's name.
	base, err := load.NewSpecInfoFromData(openapi3.NewLoader(), baseline, "baseline.json")
	if err != nil {
		return nil, fmt.Errorf("reading the baseline document: %w", err)
	}
	rev, err := load.NewSpecInfoFromData(openapi3.NewLoader(), current, "current.json")
	if err != nil {
		return nil, fmt.Errorf("reading the current document: %w", err)
	}
	d, sources, err := diff.GetWithOperationsSourcesMap(diff.NewConfig(), base, rev)
	if err != nil {
		return nil, fmt.Errorf("comparing the documents: %w", err)
	}
	l := checker.NewDefaultLocalizer()
	var out []Change
	cfg := checker.NewConfig(checker.GetAllChecks(), checker.WithSeverityLevels(tolerated))
	for _, c := range checker.CheckBackwardCompatibilityUntilLevel(cfg, d, sources, checker.ERR) {
		if c.GetLevel() != checker.ERR {
			continue
		}
		out = append(out, Change{ID: c.GetId(), Operation: c.GetOperation(), Path: c.GetPath(), Text: c.GetUncolorizedText(l)})
	}
	return out, nil
}

// Check judges current, the OpenAPI document as it is, against baseline,
// the document of the last release, and changelog, CHANGELOG.md:
//
//   - the changelog is well formed and its newest release is current's
//     info.version; baseline's version is one of its releases, not newer
//     than current's;
//   - current breaks no client of baseline, or its major version is
//     greater than baseline's and its entry's Changed or Removed section
//     has a bullet starting with BreakingMarker that names, for every
//     breaking change in an operation, that operation's path.
//
// It returns nil when all hold, and otherwise an error saying every rule
// broken and how to mend it.
func Check(baseline, current, changelog []byte) error {
	log, err := ParseChangelog(changelog)
	if err != nil {
		return err
	}
	cur, err := DocumentVersion(current)
	if err != nil {
		return fmt.Errorf("edge/openapi.json: %w", err)
	}
	base, err := DocumentVersion(baseline)
	if err != nil {
		return fmt.Errorf("the baseline document: %w", err)
	}
	if len(log.Releases) == 0 || log.Releases[0].Version != cur {
		newest := "none"
		if len(log.Releases) > 0 {
			newest = log.Releases[0].Version.String()
		}
		return fmt.Errorf("edge/openapi.json's info.version is %s but CHANGELOG.md's newest release is %s; they move together: add \"## [%s] - YYYY-MM-DD\" with what changed, or set info.version back",
			cur, newest, cur)
	}
	if cur.Compare(base) < 0 {
		return fmt.Errorf("edge/openapi.json's info.version %s is older than the baseline's %s; versions only move forward", cur, base)
	}
	if _, ok := log.Release(base); !ok {
		return fmt.Errorf("the baseline document is version %s, which CHANGELOG.md has no release of; the baseline is a released document", base)
	}
	changes, err := BreakingChanges(baseline, current)
	if err != nil || len(changes) == 0 {
		return err
	}
	list := make([]string, len(changes))
	for i, c := range changes {
		list[i] = "  " + c.String()
	}
	if cur.Major <= base.Major {
		return fmt.Errorf("edge/openapi.json breaks clients of release %s (%d breaking changes):\n%s\nRestore what they need (deprecate instead of removing: docs/api.md, \"Versioning and deprecation\"), or release a new major: set info.version to %d.0.0 and add its CHANGELOG.md entry with a %q bullet under Changed or Removed naming each path",
			base, len(changes), strings.Join(list, "\n"), base.Major+1, BreakingMarker)
	}
	entry, _ := log.Release(cur)
	breaking := strings.Join(entry.Breaking(), "\n")
	if breaking == "" {
		return fmt.Errorf("edge/openapi.json is major release %s, which breaks clients of %s:\n%s\nbut CHANGELOG.md's %s entry has no bullet starting with %q under Changed or Removed; add one saying what broke and what to use instead",
			cur, base, strings.Join(list, "\n"), cur, BreakingMarker)
	}
	var unsaid []string
	for _, c := range changes {
		if c.Path != "" && !strings.Contains(breaking, c.Path) && !slices.Contains(unsaid, c.Path) {
			unsaid = append(unsaid, c.Path)
		}
	}
	if len(unsaid) > 0 {
		return fmt.Errorf("CHANGELOG.md's %s entry says nothing of the breaking changes to %s:\n%s\nname each path in a %q bullet under Changed or Removed",
			cur, strings.Join(unsaid, ", "), strings.Join(list, "\n"), BreakingMarker)
	}
	return nil
}

// CheckFiles is Check of the documents and the changelog at those paths.
func CheckFiles(baselinePath, currentPath, changelogPath string) error {
	var files [3][]byte
	for i, p := range []string{baselinePath, currentPath, changelogPath} {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[i] = b
	}
	return Check(files[0], files[1], files[2])
}
