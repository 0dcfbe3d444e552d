// Command rappel is the Canadian Product and Vehicle Recall API edge node.
//
//	rappel serve   serve the API (from the embedded bundle on first start)
//	rappel bundle  normalize a corpus through the plugins into a data bundle
//	rappel plugin test  show what the server would make of a plugin
//	rappel keys    add, list and revoke API keys
//
// Every flag can also be set from the environment as RAPPEL_<FLAG>, upper
// case with dashes as underscores (RAPPEL_DATA_DIR); a flag on the command
// line wins.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
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
	if err := run(ctx, os.Args[1:]); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "rappel:", err)
		}
		os.Exit(2)
	}
}

const usage = `rappel is the Canadian Product and Vehicle Recall API edge node.

Usage:
	rappel serve [flags]    serve the API
	rappel bundle [flags]   build the embedded data bundle from a corpus
	rappel plugin test FILE.wasm --input FILE_OR_DIR
	                        show what the server would make of a plugin
	rappel keys add --plan free|pro --label TEXT
	                        issue an API key (printed once)
	rappel keys list        list the keys (never the keys themselves)
	rappel keys revoke ID   revoke a key; a running server refuses it within seconds

Run "rappel <command> -h" for a command's flags.
`

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return flag.ErrHelp
	}
	switch args[0] {
	case "serve":
		c := NewServeCommand()
		if err := c.ParseFlags(args[1:]); err != nil {
			return err
		}
		return c.Run(ctx)
	case "bundle":
		c := NewBundleCommand()
		if err := c.ParseFlags(args[1:]); err != nil {
			return err
		}
		return c.Run(ctx)
	case "keys":
		c := NewKeysCommand()
		if err := c.ParseFlags(args[1:]); err != nil {
			return err
		}
		return c.Run(ctx)
	case "plugin":
		return runPlugin(ctx, args[1:])
	case plugins.ChildCommand: // hidden: a plugin host runs each plugin in "rappel plugin-child"
		os.Exit(plugins.RunChild(ctx))
	case "-h", "-help", "--help", "help":
		fmt.Fprint(os.Stdout, usage)
		return nil
	}
	return fmt.Errorf("unknown command %q; the commands are serve, bundle, plugin and keys", args[0])
}

// flagsFromEnv sets every flag of fs from RAPPEL_<FLAG> where that is set,
// upper case with dashes as underscores; parsing the command line after it
// lets a flag given there win.
func flagsFromEnv(fs *flag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		name := "RAPPEL_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(name); ok && err == nil {
			if serr := f.Value.Set(v); serr != nil {
				err = fmt.Errorf("environment %s=%q: %w", name, v, serr)
			}
		}
	})
	return err
}

// parseFlags fills every flag of fs not given in args from RAPPEL_<FLAG>,
// then parses args, so that the command line wins over the environment.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := flagsFromEnv(fs); err != nil {
		return err
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return nil
}
