package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/rappel-ca/rappel"
)

// The command line's conventions, the same for every command:
//
//   - every flag can also be set as RAPPEL_<FLAG> in the environment, upper
//     case with dashes as underscores; a flag on the command line wins;
//   - -h, -help and --help print the command's flags, each with its
//     variable, to stdout and exit 0; a usage error exits 2;
//   - a RAPPEL_ variable that no command reads is warned about at start,
//     with the nearest flag's variable when one is close: a misspelt
//     variable would otherwise be ignored without a word.

// envName is the environment variable of flag name: RAPPEL_DATA_DIR for
// data-dir.
func envName(name string) string {
	return "RAPPEL_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// flagName is the flag a variable would set: data-dir for RAPPEL_DATA_DIR
// (or DATA_DIR).
func flagName(env string) string {
	return strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(env, "RAPPEL_"), "_", "-"))
}

// flagsFromEnv sets every flag of fs from its variable where that is set,
// after warning on stderr of the RAPPEL_ variables that name no flag;
// parsing the command line after it lets a flag given there win.
func flagsFromEnv(fs *flag.FlagSet) error {
	for _, w := range unknownEnv(fs, os.Environ(), commandFlagSets()) {
		fmt.Fprintln(os.Stderr, "rappel: warning:", w)
	}
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		name := envName(f.Name)
		if v, ok := os.LookupEnv(name); ok && err == nil {
			if serr := f.Value.Set(v); serr != nil {
				err = fmt.Errorf("environment %s=%q: %w", name, v, serr)
			}
		}
	})
	return err
}

// parseFlags fills every flag of fs not given in args from the
// environment, then parses args, so that the command line wins over the
// environment. It returns flag.ErrHelp, the help printed, when args ask
// for it.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := flagsFromEnv(fs); err != nil {
		return err
	}
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// parseArgs is fs.Parse, with the help (-h, -help, --help) printed to
// stdout, where a pager or grep expects it, and a usage error returned
// with where to find the flags rather than printed with all of them.
func parseArgs(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		printHelp(os.Stdout, fs)
		return err
	case err != nil:
		return fmt.Errorf("%w; %q lists the flags", err, fs.Name()+" -h")
	}
	return nil
}

// synopses are the usage lines of the commands that take more than flags.
var synopses = map[string]string{
	"rappel keys revoke": "rappel keys revoke ID [flags]",
	"rappel plugin test": "rappel plugin test FILE.wasm --input FILE_OR_DIR [flags]",
	"rappel plugin sign": "rappel plugin sign FILE.wasm --key FILE [flags]",
	"rappel plugin new":  "rappel plugin new SOURCE [flags]",
	"rappel version":     "rappel version\n\nPrints the version, commit, build date and Go version of this binary.",
}

// printHelp writes fs's usage line and flags to w, each flag with its
// environment variable and its default.
func printHelp(w io.Writer, fs *flag.FlagSet) {
	synopsis, ok := synopses[fs.Name()]
	if !ok {
		synopsis = fs.Name() + " [flags]"
	}
	fmt.Fprintf(w, "Usage: %s\n", synopsis)
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return
	}
	fmt.Fprint(w, "\nFlags, each also read from the environment variable in brackets (the\ncommand line wins):\n\n")
	fs.VisitAll(func(f *flag.Flag) {
		typ, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if typ != "" {
			line += " " + typ
		}
		fmt.Fprintf(w, "%s  [$%s]\n", line, envName(f.Name))
		if def := defaultOf(f); def != "" {
			usage += " (default " + def + ")"
		}
		fmt.Fprintf(w, "\t%s\n", strings.ReplaceAll(usage, "\n", "\n\t"))
	})
}

// defaultOf is f's default as help shows it: quoted for a string, empty
// for a zero value, which goes without saying.
func defaultOf(f *flag.Flag) string {
	switch f.DefValue {
	case "", "0", "0s", "false":
		return ""
	}
	if g, ok := f.Value.(flag.Getter); ok {
		if _, isString := g.Get().(string); isString {
			return fmt.Sprintf("%q", f.DefValue)
		}
	}
	return f.DefValue
}

// envNotFlags are the RAPPEL_ variables read other than as a flag: CI's
// switch and the tests' own, the marker of a plugin's child process, and
// the password of a plugin signing key (never a flag, which ps shows).
var envNotFlags = []string{"RAPPEL_CI", "RAPPEL_PG_BIN", "RAPPEL_PLUGIN_CHILD", passwordEnv, "RAPPEL_BENCH_PG", "RAPPEL_DOCS_DOM"}

// envNotFlagPrefixes begin the variables the tests hand their helper
// processes.
var envNotFlagPrefixes = []string{"RAPPEL_TEST_", "RAPPEL_ALERTS_FLEET_", "RAPPEL_ALERTS_HELPER_", "RAPPEL_KV_HELPER_"}

// unknownEnv returns a warning for every RAPPEL_ variable of environ that
// names no flag of fs nor of any of others (the other commands: the same
// environment often serves several, such as the keys commands run beside
// the server) and is not one of envNotFlags. A warning names the nearest
// flag, of fs first, when one is close.
func unknownEnv(fs *flag.FlagSet, environ []string, others []*flag.FlagSet) []string {
	known := map[string]bool{}
	// The variables without RAPPEL_, for Nearest: fs's, then the others'.
	var mine, theirs []string
	add := func(names *[]string) func(*flag.Flag) {
		return func(f *flag.Flag) {
			if name := envName(f.Name); !known[name] {
				known[name] = true
				*names = append(*names, strings.TrimPrefix(name, "RAPPEL_"))
			}
		}
	}
	fs.VisitAll(add(&mine))
	for _, o := range others {
		o.VisitAll(add(&theirs))
	}
	var warnings []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "RAPPEL_") || known[name] || slices.Contains(envNotFlags, name) ||
			slices.ContainsFunc(envNotFlagPrefixes, func(p string) bool { return strings.HasPrefix(name, p) }) {
			continue
		}
		w := fmt.Sprintf("%s is set, but no rappel command has a flag --%s: it is ignored", name, flagName(name))
		near, ok := rappel.Nearest(strings.TrimPrefix(name, "RAPPEL_"), mine)
		if !ok {
			near, ok = rappel.Nearest(strings.TrimPrefix(name, "RAPPEL_"), theirs)
		}
		if ok {
			w += fmt.Sprintf("; did you mean RAPPEL_%s (--%s)?", near, flagName(near))
		}
		warnings = append(warnings, w)
	}
	slices.Sort(warnings)
	return warnings
}
