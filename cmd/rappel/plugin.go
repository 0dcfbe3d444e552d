package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/bundle"
	"github.com/rappel-ca/rappel/plugins"
	"github.com/rappel-ca/rappel/plugins/testreport"
)

const pluginUsage = `Usage:
	rappel plugin test FILE.wasm --input FILE_OR_DIR [--source NAME] [--json]
	rappel plugin new SOURCE [--dir DIR] [--replace RAPPEL_CHECKOUT]
	rappel plugin manifest FILE.wasm [--manifest FILE.json] [-o OUT.wasm]
	rappel plugin keygen [--pub FILE] [--key FILE] [--unencrypted]
	rappel plugin sign FILE.wasm --key FILE [--source NAME]

test runs a plugin exactly as the server would on a candidate, and says
whether the server would activate it. new writes a plugin's Go module (its
main, a test, a Makefile with the build command). manifest writes into a
plugin the manifest of the new source it adds (or shows it). keygen writes a key pair
for signing plugins, sign writes FILE.wasm.minisig beside a plugin: a server
with --plugin-keys activates only plugins signed by a key it lists.
"rappel plugin COMMAND -h" lists a command's flags.
`

// runPlugin dispatches the plugin subcommands. (The child processes that
// run plugins for a Host are the hidden "rappel plugin-child", in run.)
func runPlugin(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, pluginUsage)
		return errUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(os.Stdout, pluginUsage)
		return flag.ErrHelp
	case "test":
		c := NewPluginTestCommand()
		if err := c.ParseFlags(args[1:]); err != nil {
			return err
		}
		return c.Run(ctx)
	case "keygen":
		c := NewPluginKeygenCommand()
		if err := parseFlags(c.flagSet(), args[1:]); err != nil {
			return err
		}
		return c.Run()
	case "new":
		c := &PluginNewCommand{}
		if err := c.ParseFlags(args[1:]); err != nil {
			return err
		}
		return c.Run()
	case "sign":
		c := &PluginSignCommand{}
		if err := c.ParseFlags(args[1:]); err != nil {
			return err
		}
		return c.Run()
	case "manifest":
		c := &PluginManifestCommand{}
		if err := c.ParseFlags(args[1:]); err != nil {
			return err
		}
		return c.Run()
	}
	return fmt.Errorf("unknown plugin command %q; the commands are test, new, manifest, keygen and sign", args[0])
}

// PluginTestCommand runs a candidate plugin on an input as the host would
// and reports the host's verdict: the records it accepts, the problems,
// the records it refuses and why, and, against the active plugin on the
// same input, whether the candidate would be activated.
type PluginTestCommand struct {
	Wasm   string
	Source string
	Input  string
	JSON   bool
	// Against is the plugin the candidate is compared with: "bundled" (the
	// binary's plugin for the source), "none", or a .wasm file.
	Against string
	MaxLoss float64
	// MaxChange is the share of the records the candidate may change in
	// any one field before the server holds it for approval, as its
	// --plugin-max-change.
	MaxChange float64
	// Diff prints what the candidate changed, field by field, against
	// the plugin it is compared with.
	Diff     bool
	Timeout  time.Duration
	Stop     string
	CacheDir string
	// PluginKeys is the trusted keys file the signature is checked with,
	// as the server's --plugin-keys; empty leaves it unchecked.
	PluginKeys string
	// Records is a file the accepted records are written to, as NDJSON.
	Records string
	// Log prints the plugin's own log lines (its stderr that is not a
	// problem line).
	Log bool

	// Bundle holds the bundled plugins; the embedded bundle by default.
	Bundle iofs.FS
	Stdout io.Writer

	// manifest is the module's, when it adds a source.
	manifest *plugins.Manifest
}

// NewPluginTestCommand returns a PluginTestCommand with the server's
// settings as defaults.
func NewPluginTestCommand() *PluginTestCommand {
	return &PluginTestCommand{Against: "bundled", MaxLoss: plugins.DefaultMaxLoss, MaxChange: plugins.DefaultMaxChange, Timeout: plugins.NewHost().Timeout, Stop: "kill"}
}

// ParseFlags reads the command line and environment into c. The module may
// come before or after the flags.
func (c *PluginTestCommand) ParseFlags(args []string) error {
	wasm, err := parseWithArg(c.flagSet(), args)
	if err != nil {
		return err
	}
	c.Wasm = wasm
	if c.Source == "" {
		c.Source = sourceOfModule(c.Wasm)
	}
	return c.Validate()
}

// parseWithArg is parseFlags for a command that takes one argument (a
// module) before, between or after its flags; it returns the argument,
// empty when there is none.
func parseWithArg(fs *flag.FlagSet, args []string) (arg string, err error) {
	if err := flagsFromEnv(fs); err != nil {
		return "", err
	}
	if err := parseArgs(fs, args); err != nil {
		return "", err
	}
	if rest := fs.Args(); len(rest) > 0 {
		arg = rest[0]
		if err := parseArgs(fs, rest[1:]); err != nil {
			return "", err
		}
		if fs.NArg() > 0 {
			return "", fmt.Errorf("unexpected argument %q", fs.Arg(0))
		}
	}
	return arg, nil
}

// flagSet defines plugin test's flags on c's fields.
func (c *PluginTestCommand) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("rappel plugin test", flag.ContinueOnError)
	fs.StringVar(&c.Source, "source", c.Source, "source `name` the plugin normalizes (default: the module's file name, hcdump for hcdump.wasm)")
	fs.StringVar(&c.Input, "input", c.Input, "`file or directory` the plugin sees under /in (a directory's contents, or the one file)")
	fs.BoolVar(&c.JSON, "json", c.JSON, "print the verdict as JSON, with every problem")
	fs.StringVar(&c.Against, "against", c.Against, "`plugin` to compare with on the same input: bundled, none, or a .wasm file")
	fs.Float64Var(&c.MaxLoss, "max-loss", c.MaxLoss, "`share` of the compared plugin's records the candidate may lose")
	fs.Float64Var(&c.MaxChange, "max-change", c.MaxChange, "`share` of the records the candidate may change in any one field before the server holds it for approval (its --plugin-max-change)")
	fs.BoolVar(&c.Diff, "diff", c.Diff, "print what the candidate changes, field by field, against the plugin it is compared with (--against)")
	fs.DurationVar(&c.Timeout, "timeout", c.Timeout, "`time` a run may take before it is stopped")
	fs.StringVar(&c.Stop, "stop", c.Stop, "how a runaway run is stopped: `kill` (a child process, as the server does), check (in process, wazero's deadline checks) or none (trusted)")
	fs.StringVar(&c.CacheDir, "cache-dir", c.CacheDir, "`directory` for compiled modules (default: a temporary one)")
	fs.StringVar(&c.PluginKeys, "plugin-keys", c.PluginKeys, "`file` of trusted public keys, as the server's: the plugin's signature (FILE.wasm.minisig) is checked with them")
	fs.StringVar(&c.Records, "records", c.Records, "`file` the records the host accepted are written to, one JSON object a line")
	fs.BoolVar(&c.Log, "log", c.Log, "print the plugin's own log lines (what it writes on stderr that is not a problem line)")
	return fs
}

// Validate reports the first setting that cannot work.
func (c *PluginTestCommand) Validate() error {
	switch {
	case c.Wasm == "":
		return errors.New("give the plugin to test: rappel plugin test FILE.wasm --input FILE_OR_DIR")
	case c.Input == "":
		return errors.New("--input is empty; give the file or directory the plugin reads")
	case c.Stop != "kill" && c.Stop != "check" && c.Stop != "none":
		return fmt.Errorf("--stop is %q; it takes kill, check or none", c.Stop)
	case c.MaxLoss < 0 || c.MaxLoss > 1:
		return fmt.Errorf("--max-loss is %g; give a share between 0 and 1", c.MaxLoss)
	case c.MaxChange < 0 || c.MaxChange > 1:
		return fmt.Errorf("--max-change is %g; give a share between 0 and 1", c.MaxChange)
	}
	return nil
}

// errRejected is returned when the host would not accept the plugin, so
// that the command exits non-zero.
var errRejected = errors.New("the host would not activate this plugin")

// Run tests the plugin and prints the report; it returns errRejected when
// the host would not activate it.
func (c *PluginTestCommand) Run(ctx context.Context) error {
	out := c.Stdout
	if out == nil {
		out = os.Stdout
	}
	if err := c.readManifest(); err != nil {
		return err
	}
	payload, err := c.readInput()
	if err != nil {
		return err
	}
	logs := &testreport.Log{}
	host := plugins.NewHost()
	host.CacheDir = c.CacheDir
	host.Timeout = c.Timeout
	host.Settings.Timeout = "--timeout"
	if c.Log {
		// The integrator asked for the plugin's whole log; the server
		// logs only the first lines of each run.
		host.MaxLogLines = 0
	}
	host.Interruptible = c.Stop != "none"
	host.InProcess = c.Stop == "check"
	host.Logger = slog.New(logs)
	if err := host.Open(ctx); err != nil {
		return err
	}
	defer host.Close(context.WithoutCancel(ctx))

	t := &testreport.Test{Host: host, Source: c.Source, Payload: payload, Manifest: c.manifest}
	rep := &testreport.Report{Plugin: c.Wasm, Source: c.Source, Manifest: c.manifest, Input: c.Input,
		Partial:    plugins.DefaultPartial()[c.Source] || c.manifest != nil && c.manifest.Merge == plugins.MergeEnrich,
		InputFiles: payload.Len(), InputBytes: payload.Size(), Stop: c.Stop, Problems: []rappel.Problem{}}
	rep.Signature, err = c.checkSignature()
	var v *plugins.Verdict
	if err == nil {
		v, err = t.Run(ctx, c.Wasm, nil, rep)
		if c.Log {
			rep.Log = logs.Lines()
		}
	}
	if err == nil && c.Records != "" {
		err = writeRecords(c.Records, v.Records)
	}
	if err == nil {
		var base *plugins.Baseline
		if path, wasm, ok := c.against(); ok {
			base = t.Compare(ctx, path, wasm, rep, v)
		}
		err = base.Accept(v, c.MaxLoss)
	}
	rep.Judge(err, c.MaxChange)
	if err := c.print(out, rep); err != nil {
		return err
	}
	if rep.Verdict != "accepted" {
		return errRejected
	}
	return nil
}

// sourceOfModule is the source a module is for by default: the server
// runs <source>.wasm.
func sourceOfModule(path string) string {
	return strings.TrimSuffix(filepath.Base(path), ".wasm")
}

// readManifest reads the module's manifest, if it carries one, and checks
// the source as the server would: a module for a source the server does
// not have needs a manifest that adds it, and a bundled source's takes
// none. The manifest's agency is registered, as the server would, so that
// the records of a new agency are judged as the server judges them.
func (c *PluginTestCommand) readManifest() error {
	m, err := checkModuleSource(c.Wasm, c.Source)
	if err != nil || m == nil {
		return err
	}
	c.manifest = m
	_, err = rappel.RegisterSourceAgency(m.Source, m.Agency)
	return err
}

// checkModuleSource checks that the module at path can run for source as
// the server would, and returns its manifest, if it carries one: a module
// for a source the server does not have needs a manifest that adds it, and
// a bundled source's takes none.
func checkModuleSource(path, source string) (*plugins.Manifest, error) {
	wasm, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading plugin: %w", err)
	}
	m, err := plugins.ReadManifest(wasm)
	if err != nil && !errors.Is(err, plugins.ErrNotModule) {
		return nil, fmt.Errorf("the server would refuse it: %w", err)
	}
	// Bytes that are no module are for the run to refuse, as the server
	// would, after their signature.
	known := checkSource(source)
	switch {
	case m == nil:
		return nil, known
	case known == nil:
		return nil, fmt.Errorf("the server would refuse it: it carries a manifest, but %s is a bundled source whose feeds the server's flags set; build it without one", source)
	case m.Source != source:
		return nil, fmt.Errorf("the server would refuse it: its manifest is for the source %q, not %q; name the file %s.wasm", m.Source, source, m.Source)
	}
	return m, nil
}

// checkSource refuses a source the server does not have, as the server
// refuses a candidate named after none.
func checkSource(source string) error {
	var names []string
	for _, s := range (&FeedsConfig{}).sources() {
		if s.Name == source {
			return nil
		}
		names = append(names, s.Name)
	}
	slices.Sort(names)
	return fmt.Errorf("there is no source named %q to run it for (the sources are %s), and the module carries no manifest to add one (rappel plugin manifest); name the module after its source or give --source", source, strings.Join(names, ", "))
}

// checkSignature checks the module's signature with --plugin-keys, as the
// server checks a candidate's, and describes it; without --plugin-keys it
// only says whether there is one.
func (c *PluginTestCommand) checkSignature() (string, error) {
	if c.PluginKeys == "" {
		if _, err := os.Stat(c.Wasm + plugins.SignatureSuffix); err == nil {
			return "signed, not checked (give --plugin-keys to check it)", nil
		}
		return "unsigned", nil
	}
	v, err := plugins.LoadTrustedKeys(c.PluginKeys)
	if err != nil {
		return "", fmt.Errorf("--plugin-keys: %w", err)
	}
	wasm, err := os.ReadFile(c.Wasm)
	if err != nil {
		return "", fmt.Errorf("reading plugin: %w", err)
	}
	if err := v.VerifyFile(c.Wasm, c.Source, wasm); err != nil {
		return "refused", err
	}
	return "signed by a trusted key", nil
}

// writeRecords writes records to path, one JSON object a line.
func writeRecords(path string, records []*rappel.Record) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, r := range records {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--records: %w", err)
	}
	return nil
}

// readInput reads --input: a directory's contents, or one file under its
// own name.
func (c *PluginTestCommand) readInput() (*plugins.Payload, error) {
	info, err := os.Stat(c.Input)
	if err != nil {
		return nil, fmt.Errorf("reading input: %w", err)
	}
	if info.IsDir() {
		return plugins.CopyPayload(os.DirFS(c.Input))
	}
	b, err := os.ReadFile(c.Input)
	if err != nil {
		return nil, fmt.Errorf("reading input: %w", err)
	}
	return plugins.NewPayload(map[string][]byte{filepath.Base(c.Input): b})
}

// print writes the report as text, or JSON with --json.
func (c *PluginTestCommand) print(w io.Writer, rep *testreport.Report) error {
	if c.JSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(rep)
	}
	rep.WriteText(w, c.Diff, c.Log)
	return nil
}

// against returns the plugin named by Against, for the report (its path,
// or "bundled") and its bytes (nil to read them from path), and false
// when there is nothing to compare with: "none", or no bundled plugin for
// the source (a binary without a bundle, or a new source).
func (c *PluginTestCommand) against() (path string, wasm []byte, ok bool) {
	switch c.Against {
	case "none":
		return "", nil, false
	case "bundled":
		src := c.Bundle
		if src == nil {
			src = bundle.Embedded()
		}
		all, err := bundle.Plugins(src)
		if err != nil || all[c.Source] == nil {
			return "", nil, false
		}
		return "bundled", all[c.Source], true
	}
	return c.Against, nil, true
}
