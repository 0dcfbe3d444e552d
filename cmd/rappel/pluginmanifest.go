package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/rappel-ca/rappel/internal/atomicfile"
	"io"
	"os"
	"path/filepath"

	"github.com/rappel-ca/rappel/plugins"
)

// PluginManifestCommand writes a manifest into a plugin module, as the
// custom section the server reads (plugins.ReadManifest), or shows the one
// it carries. Writing comes before signing: the signature covers it.
type PluginManifestCommand struct {
	Wasm string
	// Manifest is the JSON file to embed; empty shows the module's.
	Manifest string
	// Out is where the module with its manifest is written; Wasm itself
	// when empty.
	Out    string
	Stdout io.Writer
}

func (c *PluginManifestCommand) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("rappel plugin manifest", flag.ContinueOnError)
	fs.StringVar(&c.Manifest, "manifest", c.Manifest, "JSON `file` of the manifest to write into the module (see plugins/ABI.md, \"A new source\"); without it, the module's manifest is printed")
	fs.StringVar(&c.Out, "o", c.Out, "`file` the module with its manifest is written to (default: the module itself)")
	return fs
}

// ParseFlags reads the command line into c.
func (c *PluginManifestCommand) ParseFlags(args []string) error {
	wasm, err := parseWithArg(c.flagSet(), args)
	if err != nil {
		return err
	}
	if c.Wasm = wasm; c.Wasm == "" {
		return errors.New("give the plugin: rappel plugin manifest FILE.wasm --manifest manifest.json")
	}
	return nil
}

// Run writes or shows the manifest.
func (c *PluginManifestCommand) Run() error {
	wasm, err := os.ReadFile(c.Wasm)
	if err != nil {
		return fmt.Errorf("reading the plugin: %w", err)
	}
	out := stdoutOr(c.Stdout)
	if c.Manifest == "" {
		m, err := plugins.ReadManifest(wasm)
		switch {
		case err != nil:
			return err
		case m == nil:
			return fmt.Errorf("%s carries no manifest; write one with --manifest FILE", c.Wasm)
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(m)
	}
	b, err := os.ReadFile(c.Manifest)
	if err != nil {
		return fmt.Errorf("reading the manifest: %w", err)
	}
	m, err := plugins.ParseManifest(b)
	if err != nil {
		return fmt.Errorf("%s: %w", c.Manifest, err)
	}
	with, err := plugins.EmbedManifest(wasm, m)
	if err != nil {
		return err
	}
	dst := c.Out
	if dst == "" {
		dst = c.Wasm
	}
	if err := atomicfile.Write(dst, with, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote the manifest of source %s into %s (sha256 %s); sign it now: rappel plugin sign %s --key KEY\n",
		m.Source, dst, plugins.SHA256(with), dst)
	if base := sourceOfModule(dst); base != m.Source {
		fmt.Fprintf(out, "note: the server runs a plugin for %s only as %s.wasm; rename %s\n", m.Source, m.Source, filepath.Base(dst))
	}
	return nil
}
