package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"aead.dev/minisign"

	"github.com/rappel-ca/rappel/plugins"
)

// The key files follow minisign's conventions, so that minisign and
// rappel can be used in turn: a .pub file of two lines (a comment naming
// the key id, then the key), a secret key encrypted with a password
// (scrypt and XSalsa20, minisign's own) unless --unencrypted (minisign -W),
// and no file overwritten without --force (minisign -f).

// passwordEnv holds the secret key's password where no one can type it
// (a build machine); otherwise it is asked for on the terminal.
const passwordEnv = "RAPPEL_PLUGIN_KEY_PASSWORD"

// PluginKeygenCommand writes a key pair for signing plugins.
type PluginKeygenCommand struct {
	Pub, Key    string
	Unencrypted bool
	Force       bool
	// Stdin is where a password is read when passwordEnv is not set; a
	// terminal has its echo turned off.
	Stdin  *os.File
	Stdout io.Writer
}

// NewPluginKeygenCommand returns the command with its default file names.
func NewPluginKeygenCommand() *PluginKeygenCommand {
	return &PluginKeygenCommand{Pub: "rappel-plugins.pub", Key: "rappel-plugins.key"}
}

func (c *PluginKeygenCommand) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("rappel plugin keygen", flag.ContinueOnError)
	fs.StringVar(&c.Pub, "pub", c.Pub, "`file` the public key is written to; list its key line in the server's --plugin-keys file")
	fs.StringVar(&c.Key, "key", c.Key, "`file` the secret key is written to (mode 0600); keep it off the servers")
	fs.BoolVar(&c.Unencrypted, "unencrypted", c.Unencrypted, "write the secret key without a password (as minisign -W); otherwise the password is $"+passwordEnv+" or asked for")
	fs.BoolVar(&c.Force, "force", c.Force, "overwrite key files that exist")
	return fs
}

// Run generates the pair and writes both files.
func (c *PluginKeygenCommand) Run() error {
	if !c.Force {
		for _, f := range []string{c.Pub, c.Key} {
			if _, err := os.Stat(f); err == nil {
				return fmt.Errorf("%s exists; give --force to overwrite it, or other --pub and --key files", f)
			}
		}
	}
	pub, priv, err := minisign.GenerateKey(nil)
	if err != nil {
		return err
	}
	keyText, err := priv.MarshalText()
	if !c.Unencrypted {
		var password string
		if password, err = readPassword(c.Stdin, "Password for the new secret key: ", true); err != nil {
			return err
		}
		keyText, err = minisign.EncryptKey(password, priv)
	}
	if err != nil {
		return err
	}
	pubText, _ := pub.MarshalText()
	if err := os.WriteFile(c.Key, append(keyText, '\n'), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(c.Pub, append(pubText, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdoutOr(c.Stdout), "key %s: public key in %s (add its last line to the server's --plugin-keys file), secret key in %s\n", plugins.KeyID(pub.ID()), c.Pub, c.Key)
	return nil
}

// PluginSignCommand writes a plugin's signature beside it.
type PluginSignCommand struct {
	Wasm   string
	Key    string
	Source string
	Stdin  *os.File
	Stdout io.Writer
	// Now is the signing time; time.Now when nil.
	Now func() time.Time
}

func (c *PluginSignCommand) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("rappel plugin sign", flag.ContinueOnError)
	fs.StringVar(&c.Key, "key", c.Key, "`file` of the secret key (rappel plugin keygen or minisign -G); its password is $"+passwordEnv+" or asked for")
	fs.StringVar(&c.Source, "source", c.Source, "source `name` the plugin is signed for (default: the module's file name, vrdb for vrdb.wasm)")
	return fs
}

// ParseFlags reads the command line and environment into c.
func (c *PluginSignCommand) ParseFlags(args []string) error {
	wasm, err := parseWithArg(c.flagSet(), args)
	if err != nil {
		return err
	}
	c.Wasm = wasm
	switch {
	case c.Wasm == "":
		return errors.New("give the plugin to sign: rappel plugin sign FILE.wasm --key FILE")
	case c.Key == "":
		return errors.New("--key is empty; give the secret key file (rappel plugin keygen writes one)")
	}
	if c.Source == "" {
		c.Source = sourceOfModule(c.Wasm)
	}
	_, err = checkModuleSource(c.Wasm, c.Source)
	return err
}

// Run signs the plugin and writes FILE.wasm.minisig.
func (c *PluginSignCommand) Run() error {
	wasm, err := os.ReadFile(c.Wasm)
	if err != nil {
		return fmt.Errorf("reading the plugin: %w", err)
	}
	priv, err := c.secretKey()
	if err != nil {
		return err
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	sig := plugins.Sign(priv, filepath.Base(c.Wasm), c.Source, wasm, now())
	out := c.Wasm + plugins.SignatureSuffix
	if err := os.WriteFile(out, sig, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdoutOr(c.Stdout), "signed %s (sha256 %s) for source %s with key %s: %s\n", c.Wasm, plugins.SHA256(wasm), c.Source, plugins.KeyID(priv.ID()), out)
	return nil
}

// secretKey reads --key, decrypting it with the password when it is
// encrypted.
func (c *PluginSignCommand) secretKey() (minisign.PrivateKey, error) {
	var priv minisign.PrivateKey
	text, err := os.ReadFile(c.Key)
	if err != nil {
		return priv, fmt.Errorf("reading the secret key: %w", err)
	}
	if !minisign.IsEncrypted(text) {
		if err := priv.UnmarshalText(text); err != nil {
			return priv, fmt.Errorf("%s is not a minisign secret key: %s", c.Key, strings.TrimPrefix(err.Error(), "minisign: "))
		}
		return priv, nil
	}
	password, err := readPassword(c.Stdin, "Password for "+c.Key+": ", false)
	if err != nil {
		return priv, err
	}
	if priv, err = minisign.DecryptKey(password, text); err != nil {
		return priv, fmt.Errorf("%s could not be decrypted: the password is wrong, or it is not a minisign secret key", c.Key)
	}
	return priv, nil
}

// readPassword is $RAPPEL_PLUGIN_KEY_PASSWORD or, without it, a line
// read from in after prompt (on stderr), asked twice when confirm is set.
func readPassword(in *os.File, prompt string, confirm bool) (string, error) {
	if p, ok := os.LookupEnv(passwordEnv); ok {
		if p == "" {
			return "", fmt.Errorf("%s is empty; give a password, or --unencrypted for a key without one", passwordEnv)
		}
		return p, nil
	}
	if in == nil {
		in = os.Stdin
	}
	restore := noEcho(in)
	defer restore()
	r := bufio.NewReader(in)
	ask := func(prompt string) (string, error) {
		fmt.Fprint(os.Stderr, prompt)
		line, err := r.ReadString('\n')
		fmt.Fprintln(os.Stderr)
		if err != nil && line == "" {
			return "", fmt.Errorf("no password was given: type it, or set %s", passwordEnv)
		}
		return strings.TrimRight(line, "\r\n"), nil
	}
	p, err := ask(prompt)
	if err != nil {
		return "", err
	}
	if p == "" {
		return "", errors.New("the password is empty; type one, or give --unencrypted for a key without one")
	}
	if confirm {
		again, err := ask("Password again: ")
		if err != nil {
			return "", err
		}
		if again != p {
			return "", errors.New("the two passwords differ; run the command again")
		}
	}
	return p, nil
}

func stdoutOr(w io.Writer) io.Writer {
	if w == nil {
		return os.Stdout
	}
	return w
}
