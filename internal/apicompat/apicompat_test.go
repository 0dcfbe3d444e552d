package apicompat

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The files CI judges, from this package's directory.
const (
	baselineFile  = "../../edge/openapi-released.json"
	currentFile   = "../../edge/openapi.json"
	changelogFile = "../../CHANGELOG.md"
)

// TestAPI_Compatible is the check CI runs on the repository itself:
// edge/openapi.json breaks no client of the released document, or it is a
// new major release whose CHANGELOG.md entry says what breaks.
func TestAPI_Compatible(t *testing.T) {
	if err := CheckFiles(baselineFile, currentFile, changelogFile); err != nil {
		t.Fatal(err)
	}
}

// mustRead returns the content of the file at path.
func mustRead(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// TestChangelog_Form: CHANGELOG.md is well formed, dated, newest first,
// and its newest release is the document's version.
func TestChangelog_Form(t *testing.T) {
	log, err := ParseChangelog(mustRead(t, changelogFile))
	if err != nil {
		t.Fatal(err)
	}
	v, err := DocumentVersion(mustRead(t, currentFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(log.Releases) == 0 || log.Releases[0].Version != v {
		t.Fatalf("CHANGELOG.md's releases %v, want the newest to be info.version %s", log.Releases, v)
	}
	for _, e := range log.Releases {
		if e.Date.IsZero() {
			t.Errorf("release %s has no date", e.Version)
		}
	}
}

// TestChangelog_Malformed: each way a changelog can be wrong is refused
// with a sentence naming its line.
func TestChangelog_Malformed(t *testing.T) {
	const head = "# Changelog\n\nIntro.\n\n## [Unreleased]\n\n"
	for _, tc := range []struct{ name, text, want string }{
		{"NoUnreleased", "# Changelog\n\n## [1.0.0] - 2026-12-04\n\n### Added\n\n- x\n", "## [Unreleased] must come before the first release"},
		{"Undated", head + "## [1.0.0]\n\n### Added\n\n- x\n", `CHANGELOG.md:7: heading "## [1.0.0]" is not`},
		{"BadDate", head + "## [1.0.0] - 2026-13-04\n\n### Added\n\n- x\n", "month out of range"},
		{"NotSemVer", head + "## [1.0] - 2026-12-04\n\n### Added\n\n- x\n", `version "1.0" is not MAJOR.MINOR.PATCH`},
		{"Ascending", head + "## [1.0.0] - 2026-12-04\n\n### Added\n\n- x\n\n## [1.1.0] - 2026-12-05\n\n### Added\n\n- y\n", "1.1.0 comes after 1.0.0: releases go newest first"},
		{"DatesBackwards", head + "## [1.1.0] - 2026-12-04\n\n### Added\n\n- x\n\n## [1.0.0] - 2026-12-05\n\n### Added\n\n- y\n", "1.0.0 is dated 2026-12-05, after 1.1.0's 2026-12-04"},
		{"UnknownSection", head + "## [1.0.0] - 2026-12-04\n\n### Improved\n\n- x\n", `section "Improved" is not one of Added, Changed`},
		{"SectionOrder", head + "## [1.0.0] - 2026-12-04\n\n### Fixed\n\n- x\n\n### Added\n\n- y\n", "section Added comes after Fixed"},
		{"NotABullet", head + "## [1.0.0] - 2026-12-04\n\n### Added\n\nSome prose.\n", `"Some prose." is not a bullet`},
		{"Empty", head + "## [1.0.0] - 2026-12-04\n", "release 1.0.0 has no section"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseChangelog([]byte(tc.text))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ParseChangelog: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// planted is a copy of the repository's three files in a temporary
// directory, which a test changes as a pull request would.
type planted struct {
	t                         *testing.T
	baseline, current, change string // paths
	doc                       map[string]any
}

func plant(t *testing.T) *planted {
	dir := t.TempDir()
	p := &planted{t: t, baseline: filepath.Join(dir, "openapi-released.json"),
		current: filepath.Join(dir, "openapi.json"), change: filepath.Join(dir, "CHANGELOG.md")}
	for from, to := range map[string]string{baselineFile: p.baseline, currentFile: p.current, changelogFile: p.change} {
		if err := os.WriteFile(to, mustRead(t, from), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := json.Unmarshal(mustRead(t, p.current), &p.doc); err != nil {
		t.Fatal(err)
	}
	return p
}

// edit changes the current document and writes it.
func (p *planted) edit(change func(doc map[string]any)) {
	change(p.doc)
	b, err := json.MarshalIndent(p.doc, "", "  ")
	if err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(p.current, b, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// release sets the current document's version and adds its changelog
// entry, with sections, after the Unreleased heading.
func (p *planted) release(version, sections string) {
	p.edit(func(doc map[string]any) { doc["info"].(map[string]any)["version"] = version })
	// Releasing takes the place of what Unreleased held.
	text := string(mustRead(p.t, p.change))
	start := strings.Index(text, "## [Unreleased]\n")
	end := start + strings.Index(text[start+1:], "\n## [") + 2
	text = text[:start] + "## [Unreleased]\n\n## [" + version + "] - 2026-12-05\n\n" + sections + "\n\n" + text[end:]
	if err := os.WriteFile(p.change, []byte(text), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

func (p *planted) check() error { return CheckFiles(p.baseline, p.current, p.change) }

// wantFail asserts the check fails with an error holding every one of
// want.
func (p *planted) wantFail(want ...string) {
	p.t.Helper()
	err := p.check()
	if err == nil {
		p.t.Fatalf("the check passed, want it to fail with %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			p.t.Fatalf("the check failed with:\n%v\nwant %q in it", err, w)
		}
	}
}

// healthSchema returns the Health schema of doc.
func healthSchema(doc map[string]any) map[string]any {
	return doc["components"].(map[string]any)["schemas"].(map[string]any)["Health"].(map[string]any)
}

// removeHealthField removes the field name from GET /health's body, and
// from the fields it requires.
func removeHealthField(name string) func(doc map[string]any) {
	return func(doc map[string]any) {
		health := healthSchema(doc)
		delete(health["properties"].(map[string]any), name)
		var required []any
		for _, r := range health["required"].([]any) {
			if r != name {
				required = append(required, r)
			}
		}
		health["required"] = required
	}
}

// TestCheck_PlantedBreak: a breaking change planted in copies of the
// files fails the check that judges the real ones, until the major
// version moves and the changelog's entry says what broke.
func TestCheck_PlantedBreak(t *testing.T) {
	t.Run("RemovedRoute", func(t *testing.T) {
		p := plant(t)
		p.edit(func(doc map[string]any) { delete(doc["paths"].(map[string]any), "/recall/stats") })
		p.wantFail("breaks clients of release 1.0.0", "GET /recall/stats: API path removed without deprecation [api-path-removed-without-deprecation]", "set info.version to 2.0.0")

		// A minor release does not make a break acceptable.
		p.release("1.1.0", "### Removed\n\n- **BREAKING** `GET /recall/stats` is gone.")
		p.wantFail("breaks clients of release 1.0.0")
	})
	t.Run("RemovedRouteReleased", func(t *testing.T) {
		p := plant(t)
		p.edit(func(doc map[string]any) { delete(doc["paths"].(map[string]any), "/recall/stats") })
		p.release("2.0.0", "### Removed\n\n- **BREAKING** `GET /recall/stats` is gone: count with `GET /recall?facets=…`.")
		if err := p.check(); err != nil {
			t.Fatalf("a major release saying what it removed: %v", err)
		}
	})
	t.Run("RemovedField", func(t *testing.T) {
		p := plant(t)
		p.edit(removeHealthField("build"))
		p.wantFail("GET /health:", "response-required-property-removed")

		// The major moved, but the entry says nothing of the break.
		p.release("2.0.0", "### Removed\n\n- The `build` object of `GET /health`.")
		p.wantFail("has no bullet starting with \"**BREAKING**\"")
	})
	t.Run("RemovedFieldUnnamed", func(t *testing.T) {
		p := plant(t)
		p.edit(removeHealthField("records"))
		// A BREAKING bullet, but about another path.
		p.release("2.0.0", "### Changed\n\n- **BREAKING** `GET /recall` sorts by date.")
		p.wantFail("says nothing of the breaking changes to /health")
	})
	t.Run("RemovedFieldReleased", func(t *testing.T) {
		p := plant(t)
		p.edit(removeHealthField("records"))
		p.release("2.0.0", "### Removed\n\n- **BREAKING** `records` of `/health`: count with `GET /recall?limit=0`.")
		if err := p.check(); err != nil {
			t.Fatalf("a major release saying what it removed: %v", err)
		}
	})
	t.Run("Compatible", func(t *testing.T) {
		// A new optional parameter and a new response field break no
		// one: released as a minor, the check passes.
		p := plant(t)
		p.edit(func(doc map[string]any) {
			op := doc["paths"].(map[string]any)["/health"].(map[string]any)["get"].(map[string]any)
			op["parameters"] = []any{map[string]any{"name": "verbose", "in": "query", "schema": map[string]any{"type": "boolean"}}}
			healthSchema(doc)["properties"].(map[string]any)["uptime_seconds"] = map[string]any{"type": "integer"}
		})
		if err := p.check(); err != nil {
			t.Fatalf("compatible changes, version unchanged: %v", err)
		}
		p.release("1.1.0", "### Added\n\n- `verbose` on `GET /health`, and its `uptime_seconds`.")
		if err := p.check(); err != nil {
			t.Fatalf("compatible changes released as 1.1.0: %v", err)
		}
	})
	t.Run("NewResponseEnumValue", func(t *testing.T) {
		// A value a response may now hold is compatible by the policy
		// (clients read an unknown one as "other"), though oasdiff alone
		// rates it an error.
		p := plant(t)
		p.edit(func(doc map[string]any) {
			st := healthSchema(doc)["properties"].(map[string]any)["status"].(map[string]any)
			st["enum"] = append(st["enum"].([]any), "maintenance")
		})
		if err := p.check(); err != nil {
			t.Fatalf("a new value of a response's enum: %v", err)
		}
	})
	t.Run("VersionWithoutEntry", func(t *testing.T) {
		p := plant(t)
		p.edit(func(doc map[string]any) { doc["info"].(map[string]any)["version"] = "1.1.0" })
		p.wantFail("info.version is 1.1.0 but CHANGELOG.md's newest release is 1.0.0")
	})
}
