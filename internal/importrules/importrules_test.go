package importrules

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// module is the module's import path.
const module = "github.com/rappel-ca/rappel"

// allowed is the package graph the rules allow, by part of the module (a
// top-level directory; "" is the domain, the root package rappel): the
// other parts a part's packages may import, besides their own part's.
// The domain imports the standard library only, and every other part
// depends on it; kv, plugins, bundle, edge, feeds, fleet and alerts, the
// service packages, do not import each other, and cmd wires them. The
// libraries beside the domain (internal, vindecode, idn) import the
// domain at most, and any part may use them. match, the screening of a
// catalog, imports the domain only; the edge serves it. Imports by tests
// are not bound: a test may put the real parts next to each other.
var allowed = map[string][]string{
	"":          nil,
	"internal":  {""},
	"vindecode": {""},
	"idn":       nil,
	"kv":        {"", "internal"},
	"plugins":   {"", "internal"},
	"bundle":    {"", "internal"},
	"match":     {""},
	"edge":      {"", "internal", "vindecode", "idn", "match"},
	"feeds":     {"", "internal"},
	"fleet":     {"", "internal"},
	"alerts":    {"", "internal", "idn"},
	"deploy":    nil,
	"cmd":       {"", "internal", "vindecode", "idn", "kv", "plugins", "bundle", "edge", "feeds", "fleet", "alerts", "match"},
}

// pkg is what go list says of a package.
type pkg struct {
	ImportPath string
	Standard   bool
	Imports    []string
	Deps       []string
}

// listPackages runs go list over the module's packages and everything
// they depend on.
func listPackages(t *testing.T) map[string]*pkg {
	t.Helper()
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	cmd := exec.Command("go", "list", "-deps", "-json", "./...")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("go list: %v\n%s", err, ee.Stderr)
	} else if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string]*pkg{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("reading go list's output: %v", err)
		}
		pkgs[p.ImportPath] = &p
	}
	if pkgs[module] == nil {
		t.Fatalf("go list did not list the domain package %s", module)
	}
	return pkgs
}

// partOf returns the part of the module path p is in, and whether p is
// in the module at all.
func partOf(p string) (string, bool) {
	if p == module {
		return "", true
	}
	rest, ok := strings.CutPrefix(p, module+"/")
	if !ok {
		return "", false
	}
	part, _, _ := strings.Cut(rest, "/")
	return part, true
}

// TestDomain_StandardLibraryOnly checks that the domain package depends,
// directly or not, on the standard library alone.
func TestDomain_StandardLibraryOnly(t *testing.T) {
	pkgs := listPackages(t)
	var bad []string
	for _, d := range pkgs[module].Deps {
		if p := pkgs[d]; p == nil || !p.Standard {
			bad = append(bad, d)
		}
	}
	if len(bad) > 0 {
		t.Errorf("the domain package %s depends on packages outside the standard library: %s; "+
			"move what needs them beside the domain and hand it in through an interface the domain defines",
			module, strings.Join(bad, ", "))
	}
}

// TestPackages_ImportOnlyWhatTheRulesAllow checks every import of every
// package of the module against allowed.
func TestPackages_ImportOnlyWhatTheRulesAllow(t *testing.T) {
	pkgs := listPackages(t)
	paths := make([]string, 0, len(pkgs))
	for path := range pkgs {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	for _, path := range paths {
		from, ok := partOf(path)
		if !ok {
			continue
		}
		may, known := allowed[from]
		if !known {
			t.Errorf("%s is in %q, a part of the module the import rules do not name: add it to allowed", path, from)
			continue
		}
		for _, imp := range pkgs[path].Imports {
			to, ok := partOf(imp)
			if !ok || to == from && from != "" || slices.Contains(may, to) {
				continue
			}
			t.Errorf("%s imports %s: %q may import only %q and itself", path, imp, from, may)
		}
	}
}
