// Command rappel is the Canadian Product and Vehicle Recall API edge node.
//
//	rappel serve   serve the API (from the embedded bundle on first start)
//	rappel bundle  normalize a corpus (generated, or fetched from the feeds
//	               with --fetch) through the plugins into a data bundle
//	rappel plugin test  show what the server would make of a plugin
//	rappel keys    add, list and revoke API keys
//	rappel backup  save a running node's data dir; rappel restore unpacks it
//	rappel version print the version, commit, build date and Go version
//
// Every flag can also be set from the environment as RAPPEL_<FLAG>, upper
// case with dashes as underscores (RAPPEL_DATA_DIR); a flag on the command
// line wins. -h, -help or --help after any command lists its flags with
// their variables (flags.go).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/rappel-ca/rappel/plugins"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal starts a graceful shutdown (rappel serve drains);
	// restoring the default handling then lets a second one end the
	// process at once.
	context.AfterFunc(ctx, stop)
	os.Exit(exitCode(run(ctx, os.Args[1:]), os.Stderr))
}

// errUsage is run's error when it printed the usage to stderr because the
// command line named no command (or no keys or plugin action): exit 2
// with nothing more to say.
var errUsage = errors.New("usage: a command or action is missing")

// stopError is a node that cannot run on its data dir (a full file
// system, a corrupt store): the process exits with status 1, as when the
// store stops it at run time, rather than the 2 of a setting that cannot
// work.
type stopError struct{ msg string }

func (e *stopError) Error() string { return e.msg }

// runFailure is the error of a command that started and then failed (a
// shutdown that cut requests, a backup cut short): status 1, like a
// stopError, and not the 2 of a command line that cannot work.
type runFailure struct{ err error }

func (e *runFailure) Error() string { return e.err.Error() }
func (e *runFailure) Unwrap() error { return e.err }

// failed marks the error of a command's Run as a runFailure.
func failed(err error) error {
	if err == nil {
		return nil
	}
	return &runFailure{err}
}

// exitCode is the process's exit status for run's error, which it prints
// to stderr when there is something to say: 0 for none and for the help
// asked for (flag.ErrHelp: printed to stdout already), 1 for a stopError
// and a runFailure, 2 for any other: a usage error, a setting that cannot
// work (docs/operations.md, "Exit status").
func exitCode(err error, stderr io.Writer) int {
	var stop *stopError
	var fail *runFailure
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &stop), errors.As(err, &fail):
		printFinal(stderr, err)
		return 1
	case !errors.Is(err, errUsage):
		printFinal(stderr, err)
	}
	return 2
}

const usage = `rappel is the Canadian Product and Vehicle Recall API edge node.

Usage:
	rappel serve [flags]    serve the API
	rappel bundle [flags]   build the embedded data bundle from a corpus,
	                        or from the agencies' feeds with --fetch
	rappel plugin test FILE.wasm --input FILE_OR_DIR
	                        show what the server would make of a plugin
	rappel plugin new SOURCE
	                        write a plugin's Go module, ready to build
	rappel plugin keygen    write a key pair for signing plugins
	rappel plugin sign FILE.wasm --key FILE
	                        sign a plugin for servers that trust the key
	rappel keys add --plan free|pro --label TEXT
	                        issue an API key (printed once)
	rappel keys list        list the keys (never the keys themselves)
	rappel keys revoke ID   revoke a key; a running server refuses it within seconds
	rappel backup --to FILE --node URL --admin-key KEY
	                        save a running node's data dir into FILE
	rappel restore --from FILE --data-dir DIR
	                        unpack a backup into an empty data dir
	rappel version          print the version, commit, build date and Go version

Run "rappel <command> -h" for a command's flags.
`

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return errUsage
	}
	switch args[0] {
	case "serve":
		c := NewServeCommand()
		if err := c.ParseFlags(args[1:]); err != nil {
			return err
		}
		return failed(c.Run(ctx))
	case "bundle":
		c := NewBundleCommand()
		if err := c.ParseFlags(args[1:]); err != nil {
			return err
		}
		return failed(c.Run(ctx))
	case "keys":
		c := NewKeysCommand()
		if err := c.ParseFlags(args[1:]); err != nil {
			return err
		}
		return failed(c.Run(ctx))
	case "backup":
		c := NewBackupCommand()
		if err := c.ParseFlags(args[1:]); err != nil {
			return err
		}
		return failed(c.Run(ctx))
	case "restore":
		c := NewRestoreCommand()
		if err := c.ParseFlags(args[1:]); err != nil {
			return err
		}
		return failed(c.Run(ctx))
	case "plugin":
		return runPlugin(ctx, args[1:])
	case plugins.ChildCommand: // hidden: a plugin host runs each plugin in "rappel plugin-child"
		os.Exit(plugins.RunChild(ctx))
	case "version", "-version", "--version":
		return runVersion(args[1:], os.Stdout)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(os.Stdout, usage)
		return nil
	}
	return fmt.Errorf("unknown command %q; the commands are serve, bundle, plugin, keys, backup, restore and version", args[0])
}

// commandFlagSets returns the flags of every command, for telling a
// RAPPEL_ variable meant for another command from a misspelt one
// (unknownEnv).
func commandFlagSets() []*flag.FlagSet {
	keys := NewKeysCommand()
	keys.Action = "add" // the flags of list and revoke, and more
	return []*flag.FlagSet{NewServeCommand().flagSet(), NewBundleCommand().flagSet(), keys.flagSet(), NewPluginTestCommand().flagSet(),
		NewPluginKeygenCommand().flagSet(), (&PluginSignCommand{}).flagSet(), (&PluginNewCommand{}).flagSet(),
		NewBackupCommand().flagSet(), NewRestoreCommand().flagSet()}
}
