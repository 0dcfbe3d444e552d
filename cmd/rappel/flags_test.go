package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"
)

func TestUnknownEnv(t *testing.T) {
	serve := NewServeCommand().flagSet()
	others := commandFlagSets()
	for _, tc := range []struct {
		name    string
		fs      *flag.FlagSet
		environ []string
		want    []string
	}{
		{"Known", serve, []string{"RAPPEL_DATA_DIR=/d", "RAPPEL_LOG_FORMAT=json", "RAPPEL_LOG_LEVEL=warn", "PATH=/bin", "RAPPEL=1"}, nil},
		{"NotFlags", serve, []string{"RAPPEL_CI=1", "RAPPEL_TEST_BUNDLE=1", "RAPPEL_PG_BIN=/usr/lib/postgresql/17/bin", "RAPPEL_TEST_FLEET_NODE=a"}, nil},
		// The keys commands run in the server's environment, and the
		// server in one that holds a keys command's setting.
		{"OtherCommand", NewKeysCommand().flagSet(), []string{"RAPPEL_API_KEYS=k", "RAPPEL_TLS_DOMAINS=api.example.ca"}, nil},
		{"OtherCommandServe", serve, []string{"RAPPEL_PLAN=pro", "RAPPEL_CORPUS=build/corpus"}, nil},
		{"Typo", serve, []string{"RAPPEL_DATA_DIRR=/d"},
			[]string{"RAPPEL_DATA_DIRR is set, but no rappel command has a flag --data-dirr: it is ignored; did you mean RAPPEL_DATA_DIR (--data-dir)?"}},
		{"Swap", serve, []string{"RAPPEL_LOG_FROMAT=json"},
			[]string{"RAPPEL_LOG_FROMAT is set, but no rappel command has a flag --log-fromat: it is ignored; did you mean RAPPEL_LOG_FORMAT (--log-format)?"}},
		{"Singular", serve, []string{"RAPPEL_API_KEY=k"},
			[]string{"RAPPEL_API_KEY is set, but no rappel command has a flag --api-key: it is ignored; did you mean RAPPEL_API_KEYS (--api-keys)?"}},
		// Nearest looks at the command's own flags first, then the
		// others'.
		{"TypoOfOtherCommand", flag.NewFlagSet("rappel version", flag.ContinueOnError), []string{"RAPPEL_ADMIN_KYE=a"},
			[]string{"RAPPEL_ADMIN_KYE is set, but no rappel command has a flag --admin-kye: it is ignored; did you mean RAPPEL_ADMIN_KEY (--admin-key)?"}},
		{"Unknown", serve, []string{"RAPPEL_COLOUR=blue"},
			[]string{"RAPPEL_COLOUR is set, but no rappel command has a flag --colour: it is ignored"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := unknownEnv(tc.fs, tc.environ, others)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("unknownEnv(%q) =\n%q\nwant\n%q", tc.environ, got, tc.want)
			}
		})
	}
}

// TestPrintHelp checks that every command's help names every flag with its
// variable, from the flag sets the commands parse with.
func TestPrintHelp(t *testing.T) {
	for _, fs := range commandFlagSets() {
		t.Run(strings.ReplaceAll(fs.Name(), " ", "_"), func(t *testing.T) {
			var b bytes.Buffer
			printHelp(&b, fs)
			help := b.String()
			if !strings.HasPrefix(help, "Usage: "+fs.Name()) {
				t.Errorf("help does not begin with the usage line:\n%s", help)
			}
			fs.VisitAll(func(f *flag.Flag) {
				typ, _ := flag.UnquoteUsage(f)
				line := strings.TrimSpace(fmt.Sprintf("--%s %s", f.Name, typ))
				if !strings.Contains(help, "\n  "+line+"  [$"+envName(f.Name)+"]\n") {
					t.Errorf("help lacks %q with [$%s]:\n%s", line, envName(f.Name), help)
				}
			})
		})
	}
	var b bytes.Buffer
	printHelp(&b, NewServeCommand().flagSet())
	for _, want := range []string{
		"  --addr host:port  [$RAPPEL_ADDR]\n\thost:port to listen on (default \"127.0.0.1:8080\")\n",
		"  --log-level level  [$RAPPEL_LOG_LEVEL]\n\tleast level logged: debug, info, warn or error (default info)\n",
		"  --query-budget time  [$RAPPEL_QUERY_BUDGET]\n\ttime a search may take before it answers 504 (default 2s)\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("serve's help lacks %q", want)
		}
	}
}

func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		err    error
		code   int
		stderr string
	}{
		{nil, 0, ""},
		{flag.ErrHelp, 0, ""},
		{fmt.Errorf("wrapped: %w", flag.ErrHelp), 0, ""},
		{errUsage, 2, ""},
		{fmt.Errorf("opening: %w", &stopError{"the data directory /x has 2 MiB free"}), 1, "rappel: opening: the data directory /x has 2 MiB free\n"},
		{errors.New("--feeds is \"sometimes\"; it takes on or off"), 2, "rappel: --feeds is \"sometimes\"; it takes on or off\n"},
		{failed(errors.New("finishing requests in flight: context deadline exceeded")), 1, "rappel: finishing requests in flight: context deadline exceeded\n"},
	} {
		var b bytes.Buffer
		if code := exitCode(tc.err, &b); code != tc.code || b.String() != tc.stderr {
			t.Errorf("exitCode(%v) = %d, printing %q; want %d, %q", tc.err, code, b.String(), tc.code, tc.stderr)
		}
	}
}

// TestParseFlags_AdminKeyLength: an admin key too short to be beyond
// guessing is refused at start with a sentence that says how to make one,
// unless development asks for it.
func TestParseFlags_AdminKeyLength(t *testing.T) {
	c := NewServeCommand()
	err := c.ParseFlags([]string{"--admin-key", "x"})
	if err == nil || !strings.Contains(err.Error(), "at least 32") || !strings.Contains(err.Error(), "--admin-key-allow-short") {
		t.Fatalf("a one-character admin key: %v", err)
	}
	if err := NewServeCommand().ParseFlags([]string{"--admin-key", "x", "--admin-key-allow-short"}); err != nil {
		t.Fatalf("a short admin key allowed for development: %v", err)
	}
	if err := NewServeCommand().ParseFlags([]string{"--admin-key", strings.Repeat("k", 32)}); err != nil {
		t.Fatalf("a 32-character admin key: %v", err)
	}
}
