package main

import (
	"embed"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"text/template"

	"github.com/rappel-ca/rappel/internal/buildinfo"
)

// The files of a new plugin's module: go.mod, a main wrapping the bundled
// normalizer of its source, a test on a sample (samples/<source>, made up
// for the purpose), a Makefile and a README.
//
//go:embed plugintemplate
var pluginTemplate embed.FS

// PluginNewCommand scaffolds a plugin module in a new directory.
type PluginNewCommand struct {
	// Source is the source the plugin normalizes; it names the module and
	// the .wasm file.
	Source string
	Dir    string
	// Replace is a rappel checkout the module takes the guest SDK from
	// (a replace directive); empty requires this binary's own version.
	Replace string
	Stdout  io.Writer
}

func (c *PluginNewCommand) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("rappel plugin new", flag.ContinueOnError)
	fs.StringVar(&c.Dir, "dir", c.Dir, "`directory` to create (default: the source's name)")
	fs.StringVar(&c.Replace, "replace", c.Replace, "`directory` of a rappel checkout to build against (a replace directive in go.mod); needed unless this binary is a tagged release")
	return fs
}

// ParseFlags reads the command line and environment into c.
func (c *PluginNewCommand) ParseFlags(args []string) error {
	src, err := parseWithArg(c.flagSet(), args)
	if err != nil {
		return err
	}
	c.Source = src
	if c.Source == "" {
		return errors.New("give the source the plugin is for: rappel plugin new SOURCE (hcdump, vrdb or detail)")
	}
	if c.Dir == "" {
		c.Dir = c.Source
	}
	return checkSource(c.Source)
}

// scaffold is what the templates are filled with.
type scaffold struct {
	Name, Source, Module, GoVersion, RappelVersion, Replace string
}

// Run writes the module's files into a new directory.
func (c *PluginNewCommand) Run() error {
	s, err := c.scaffold()
	if err != nil {
		return err
	}
	if err := os.Mkdir(c.Dir, 0o755); err != nil {
		return fmt.Errorf("creating the plugin's directory: %w; give another --dir", err)
	}
	files := map[string]string{"go.mod": "go.mod.tmpl", "main.go": "main.go.tmpl", "main_test.go": "main_test.go.tmpl", "Makefile": "Makefile.tmpl", "README.md": "README.md.tmpl"}
	for out, tmpl := range files {
		if err := writeTemplate(filepath.Join(c.Dir, out), tmpl, s); err != nil {
			return err
		}
	}
	if err := copySample(c.Source, filepath.Join(c.Dir, "testdata", "in")); err != nil {
		return err
	}
	fmt.Fprintf(stdoutOr(c.Stdout), "wrote the %s plugin's module in %s: see its README.md; run \"go mod tidy\" there first\n", c.Source, c.Dir)
	return nil
}

// copySample writes the source's sample files, which its test reads, into
// dir: a small input as the server mounts it under /in.
func copySample(source, dir string) error {
	root := "plugintemplate/samples/" + source
	return iofs.WalkDir(pluginTemplate, root, func(path string, d iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		out := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(path, root)))
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := pluginTemplate.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
}

// releaseVersion matches a tagged release's version, which the module
// proxy serves.
var releaseVersion = regexp.MustCompile(`^v\d+\.\d+\.\d+$`)

// scaffold fills the templates' values: the rappel module comes from
// --replace, or from this binary's version when it is a release.
func (c *PluginNewCommand) scaffold() (scaffold, error) {
	s := scaffold{Name: c.Source, Source: c.Source, Module: "example.com/rappel-plugin-" + c.Source,
		// The Go that built this rappel, which its module needs at least.
		GoVersion: strings.TrimPrefix(runtime.Version(), "go")}
	v := buildinfo.Read().Version
	switch {
	case c.Replace != "":
		abs, err := filepath.Abs(c.Replace)
		if err != nil {
			return s, err
		}
		if _, err := os.Stat(filepath.Join(abs, "plugins", "guest")); err != nil {
			return s, fmt.Errorf("--replace %s is not a rappel checkout (it has no plugins/guest); give the directory holding rappel's go.mod", c.Replace)
		}
		s.Replace, s.RappelVersion = abs, "v0.0.0"
	case releaseVersion.MatchString(v):
		s.RappelVersion = v
	default:
		return s, fmt.Errorf("this rappel is not a tagged release (version %s), so its module cannot be fetched by version; give --replace DIR, a checkout of the same rappel", v)
	}
	return s, nil
}

// writeTemplate fills the template named tmpl with s into path.
func writeTemplate(path, tmpl string, s scaffold) error {
	t, err := template.ParseFS(pluginTemplate, "plugintemplate/"+tmpl)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := t.Execute(f, s); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
