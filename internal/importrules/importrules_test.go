package importrules

import (
	"encoding/json"
	"errors"
	"fmt"
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
// catalog, imports the domain only; the edge serves it, and alerts
// matches watchlists with it. Imports by tests
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
	"alerts":    {"", "internal", "idn", "match"},
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

// within is, for the packages named, which packages of their own part
// they may import (relative to the module); a package of a part not named
// here may import any of its part. The stores of kv do not know each
// other: the Pebble store (kv), the search engine (kv/index, over its
// segment format kv/segment) and the SQL store of a fleet (kv/postgres)
// are three implementations of the domain's interfaces, wired by cmd;
// kv/kvtest, which opens Pebble stores for other packages' tests, is the
// one that imports kv. A feed parser (plugins/hcdump and the others,
// compiled to Wasm) sees the guest side only, never the host that runs it
// (plugins, with wazero); the test of a candidate plugin
// (plugins/testreport) runs it through that host.
var within = map[string][]string{
	"kv":                   nil,
	"kv/index":             {"kv/segment"},
	"kv/segment":           nil,
	"kv/postgres":          nil,
	"kv/postgres/pgtest":   nil,
	"kv/kvtest":            {"kv"},
	"plugins":              {"plugins/guest"},
	"plugins/guest":        nil,
	"plugins/hcdump":       {"plugins/guest"},
	"plugins/vrdb":         {"plugins/guest"},
	"plugins/page":         {"plugins/guest"},
	"plugins/detail":       {"plugins/guest", "plugins/page"},
	"plugins/testreport":   {"plugins"},
	"internal/jsonx":       nil,
	"internal/jsonstr":     nil,
	"internal/mmap":        nil,
	"internal/archive":     nil,
	"internal/buildinfo":   nil,
	"internal/judged":      nil,
	"internal/spantest":    nil,
	"internal/importrules": nil,
	"internal/atomicfile":  nil,
	"internal/lograte":     nil,
	"internal/logline":     nil,
	"internal/acme":        nil,
	"internal/apicompat":   nil,
}

// libraries are the third-party libraries whose use the rules bound, by
// import path prefix: the packages (relative to the module) that may
// import them. Each is a choice made once (RATIONALE.md) and kept behind
// the one package that wraps it, so that replacing it touches that
// package: Pebble is the node's store, pgx the fleet's, wazero runs the
// plugins, the Prometheus client serves /metrics, the OpenTelemetry SDK
// is set up where the node is wired (packages record spans with the API
// alone), certmagic and zap are behind internal/acme (TLS), sonic is
// behind internal/jsonx, roaring and vellum are the search engine's,
// oasdiff (with its kin-openapi) judges the API description's changes in
// internal/apicompat, which only tests import.
var libraries = map[string][]string{
	"github.com/cockroachdb/pebble":       {"kv", "kv/storetest", "kv/kvtest", "bundle", "cmd/rappel"},
	"github.com/jackc/pgx":                {"kv/postgres", "kv/postgres/pgtest"},
	"github.com/tetratelabs/wazero":       {"plugins"},
	"github.com/prometheus/client_golang": {"edge"},
	"go.opentelemetry.io/otel/sdk":        {"cmd/rappel", "internal/spantest"},
	"github.com/caddyserver/certmagic":    {"internal/acme"},
	"go.uber.org/zap":                     {"internal/acme"},
	"github.com/bytedance/sonic":          {"internal/jsonx"},
	"github.com/RoaringBitmap/roaring":    {"kv/index", "kv/segment"},
	"github.com/blevesearch/vellum":       {"kv/index", "kv/segment"},
	"github.com/oasdiff/oasdiff":          {"internal/apicompat"},
	"github.com/getkin/kin-openapi":       {"internal/apicompat"},
}

// testOnly are the packages (relative to the module) that hold tests'
// helpers: tests of any part may import them, a package that is not a
// test may not, so that what they open and fake never reaches the binary.
var testOnly = []string{
	"kv/storetest",
	"kv/kvtest",
	"internal/spantest",
	"internal/logtest",
	"plugins/plugintest",
	"feeds/feedstest",
	"alerts/smtptest",
	// The API's versioning check: oasdiff stays out of the binary.
	"internal/apicompat",
}

// violations returns a sentence for each import of the module's packages
// in pkgs that the rules (allowed, within, libraries, testOnly) forbid.
func violations(pkgs map[string]*pkg) []string {
	paths := make([]string, 0, len(pkgs))
	for path := range pkgs {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	var out []string
	for _, path := range paths {
		from, ok := partOf(path)
		if !ok {
			continue
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
		may, known := allowed[from]
		if !known {
			out = append(out, fmt.Sprintf("%s is in %q, a part of the module the import rules do not name: add it to allowed", path, from))
			continue
		}
		ownPart, bound := within[rel]
		for _, imp := range pkgs[path].Imports {
			to, ok := partOf(imp)
			if !ok {
				if lib, users := libraryOf(imp); lib != "" && !slices.Contains(users, rel) {
					out = append(out, fmt.Sprintf("%s imports %s: only %q may use %s", path, imp, users, lib))
				}
				continue
			}
			impRel := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
			if slices.Contains(testOnly, impRel) {
				out = append(out, fmt.Sprintf("%s imports %s: only tests may import %s, a package of tests' helpers", path, imp, impRel))
				continue
			}
			switch {
			case to == from && from != "":
				if bound && !slices.Contains(ownPart, impRel) {
					out = append(out, fmt.Sprintf("%s imports %s: of its own part %q it may import only %q", path, imp, from, ownPart))
				}
			case slices.Contains(may, to):
			default:
				out = append(out, fmt.Sprintf("%s imports %s: %q may import only %q and itself", path, imp, from, may))
			}
		}
	}
	return out
}

// libraryOf returns the bound library imp belongs to and the packages
// that may use it, or "" when the rules do not bind it.
func libraryOf(imp string) (string, []string) {
	for lib, users := range libraries {
		if imp == lib || strings.HasPrefix(imp, lib+"/") {
			return lib, users
		}
	}
	return "", nil
}

// TestPackages_ImportOnlyWhatTheRulesAllow checks every import of every
// package of the module against the rules.
func TestPackages_ImportOnlyWhatTheRulesAllow(t *testing.T) {
	for _, v := range violations(listPackages(t)) {
		t.Error(v)
	}
}

// TestViolations_Planted checks that each rule catches what it forbids:
// an import graph with one planted violation of each rule yields a
// sentence for each, and nothing for the imports the rules allow.
func TestViolations_Planted(t *testing.T) {
	m := func(rel string) string { return module + "/" + rel }
	pkgs := map[string]*pkg{
		module:              {ImportPath: module},
		m("kv/postgres"):    {ImportPath: m("kv/postgres"), Imports: []string{module, m("kv"), "github.com/jackc/pgx/v5"}},
		m("kv/index"):       {ImportPath: m("kv/index"), Imports: []string{m("kv/segment"), m("kv")}},
		m("kv"):             {ImportPath: m("kv"), Imports: []string{"github.com/prometheus/client_golang/prometheus", "github.com/cockroachdb/pebble/v2"}},
		m("plugins/hcdump"): {ImportPath: m("plugins/hcdump"), Imports: []string{m("plugins/guest"), m("plugins")}},
		m("edge"):           {ImportPath: m("edge"), Imports: []string{m("kv"), "github.com/jackc/pgx/v5/pgxpool", "go.opentelemetry.io/otel/sdk/trace", "go.opentelemetry.io/otel/trace"}},
		m("feeds"):          {ImportPath: m("feeds"), Imports: []string{"github.com/cockroachdb/pebble/v2/vfs"}},
		m("alerts"):         {ImportPath: m("alerts"), Imports: []string{"github.com/tetratelabs/wazero"}},
		m("newpart/x"):      {ImportPath: m("newpart/x")},
		m("cmd/rappel"):     {ImportPath: m("cmd/rappel"), Imports: []string{m("kv"), m("kv/kvtest")}},
		m("kv/kvtest"):      {ImportPath: m("kv/kvtest"), Imports: []string{m("kv"), "github.com/cockroachdb/pebble/v2/vfs"}},
	}
	got := violations(pkgs)
	for _, want := range []string{
		"kv/postgres imports " + m("kv") + ": of its own part",
		"kv/index imports " + m("kv") + ": of its own part",
		"kv imports github.com/prometheus/client_golang/prometheus: only",
		"plugins/hcdump imports " + m("plugins") + ": of its own part",
		"edge imports " + m("kv") + `: "edge" may import only`,
		"edge imports github.com/jackc/pgx/v5/pgxpool: only",
		"edge imports go.opentelemetry.io/otel/sdk/trace: only",
		"feeds imports github.com/cockroachdb/pebble/v2/vfs: only",
		"alerts imports github.com/tetratelabs/wazero: only",
		`newpart/x is in "newpart", a part of the module the import rules do not name`,
		"cmd/rappel imports " + m("kv/kvtest") + ": only tests may import",
	} {
		found := false
		for _, v := range got {
			found = found || strings.Contains(v, want)
		}
		if !found {
			t.Errorf("no violation %q among:\n%s", want, strings.Join(got, "\n"))
		}
	}
	if len(got) != 11 {
		t.Errorf("%d violations, want the 11 planted:\n%s", len(got), strings.Join(got, "\n"))
	}
}
