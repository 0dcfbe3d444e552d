package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/edge"
	"github.com/rappel-ca/rappel/kv"
)

// KeysCommand manages the API keys of a data dir, or of a fleet's shared
// store (--shared-store): add, list, revoke. It works beside running
// servers, which see the change within edge.DefaultKeyRefresh (kv.Keys and
// postgres.Store.KeysByHash say how).
type KeysCommand struct {
	// Action is add, list or revoke.
	Action  string
	DataDir string
	// SharedStore is the fleet's database URL; when set, the keys live
	// there and DataDir is not used.
	SharedStore string
	// Plan and Label are the new key's (add).
	Plan, Label string
	// ID names the key to revoke.
	ID string

	// Stdout receives the output; os.Stdout by default.
	Stdout io.Writer
	// Now is the clock, replaced in tests.
	Now func() time.Time
}

// NewKeysCommand returns a KeysCommand with its defaults.
func NewKeysCommand() *KeysCommand {
	return &KeysCommand{DataDir: "data", Stdout: os.Stdout, Now: time.Now}
}

const keysUsage = `Usage:
	rappel keys add --plan free|pro --label TEXT [--data-dir DIR | --shared-store URL]
	rappel keys list [--data-dir DIR | --shared-store URL]
	rappel keys revoke ID [--data-dir DIR | --shared-store URL]
`

// ParseFlags reads the action, its flags and the environment into c.
func (c *KeysCommand) ParseFlags(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, keysUsage)
		return errUsage
	}
	c.Action, args = args[0], args[1:]
	switch c.Action {
	case "add", "list":
	case "revoke":
		// The ID comes first, flags after it: rappel keys revoke ID --data-dir DIR.
		if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
			c.ID, args = args[0], args[1:]
		}
	case "-h", "-help", "--help", "help":
		fmt.Fprint(os.Stdout, keysUsage)
		return flag.ErrHelp
	default:
		return fmt.Errorf("unknown keys action %q; the actions are add, list and revoke", c.Action)
	}
	if err := parseFlags(c.flagSet(), args); err != nil {
		return err
	}
	return c.Validate()
}

// flagSet defines the flags of c.Action on c's fields.
func (c *KeysCommand) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("rappel keys "+c.Action, flag.ContinueOnError)
	fs.StringVar(&c.DataDir, "data-dir", c.DataDir, "`directory` of the server's data; the keys live in its keys/ database")
	fs.StringVar(&c.SharedStore, "shared-store", c.SharedStore, "`URL` (postgres://…) of the fleet's shared store, which then holds the keys instead of the data dir")
	if c.Action == "add" {
		fs.StringVar(&c.Plan, "plan", c.Plan, "`plan` of the new key: "+strings.Join(planNames(), " or "))
		fs.StringVar(&c.Label, "label", c.Label, "`text` saying whose key it is (shown by list)")
	}
	return fs
}

// planNames lists the plans a key can be given, sorted.
func planNames() []string {
	var names []string
	for name := range rappel.DefaultPlans() {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Validate reports the first setting that cannot work.
func (c *KeysCommand) Validate() error {
	if c.SharedStore != "" {
		if err := checkSharedStore(c.SharedStore); err != nil {
			return err
		}
	} else if c.DataDir == "" {
		return errors.New("--data-dir is empty; give the server's data directory")
	}
	switch c.Action {
	case "add":
		if _, ok := rappel.DefaultPlans()[c.Plan]; !ok {
			return fmt.Errorf("--plan is %q; give %s", c.Plan, strings.Join(planNames(), " or "))
		}
		if strings.TrimSpace(c.Label) == "" {
			return errors.New("--label is empty; say whose key it is, for example --label 'Acme Inc., integration'")
		}
		if strings.ContainsFunc(c.Label, func(r rune) bool { return r < ' ' || r == 0x7f }) {
			return errors.New("--label holds a control character; give one line of text")
		}
	case "revoke":
		if c.ID == "" {
			return errors.New("revoke needs the key's ID, as rappel keys list shows it: rappel keys revoke ID")
		}
		id, err := rappel.ParseKeyID(c.ID)
		if err != nil {
			return fmt.Errorf("key ID %q: %s", c.ID, rappel.ErrorMessage(err))
		}
		c.ID = id
	}
	return nil
}

// store returns the key store: the shared store, opened (closeStore closes
// it), or the data dir's.
func (c *KeysCommand) store(ctx context.Context) (store rappel.KeyStore, closeStore func(), err error) {
	if c.SharedStore == "" {
		return kv.NewKeys(filepath.Join(c.DataDir, "keys")), func() {}, nil
	}
	shared, err := openShared(ctx, c.SharedStore, 2, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, nil, err
	}
	return shared, func() { shared.Close() }, nil
}

// Run performs the action.
func (c *KeysCommand) Run(ctx context.Context) error {
	if c.Stdout == nil {
		c.Stdout = os.Stdout
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Action != "add" && c.Action != "list" && c.Action != "revoke" {
		return fmt.Errorf("unknown keys action %q; the actions are add, list and revoke", c.Action)
	}
	if c.Action == "add" && c.SharedStore == "" {
		if err := os.MkdirAll(c.DataDir, 0o755); err != nil {
			return fmt.Errorf("creating data dir: %w", err)
		}
	}
	store, closeStore, err := c.store(ctx)
	if err != nil {
		return err
	}
	defer closeStore()
	switch c.Action {
	case "add":
		return c.add(ctx, store)
	case "list":
		return c.list(ctx, store)
	case "revoke":
		return c.revoke(ctx, store)
	}
	return fmt.Errorf("unknown keys action %q; the actions are add, list and revoke", c.Action)
}

func (c *KeysCommand) add(ctx context.Context, store rappel.KeyStore) error {
	for attempt := 0; ; attempt++ {
		key, hash := rappel.NewKey()
		a := &rappel.APIKey{
			ID:      rappel.KeyID(hash),
			Plan:    c.Plan,
			Label:   strings.TrimSpace(c.Label),
			Created: c.Now().UTC().Truncate(time.Second),
		}
		err := store.AddKey(ctx, hash, a)
		if rappel.ErrorCode(err) == rappel.EINVALID && attempt < 3 {
			continue // two keys share their first 48 bits: draw again
		}
		if err != nil {
			return fmt.Errorf("adding key: %w", err)
		}
		fmt.Fprintln(c.Stdout, key)
		fmt.Fprintf(c.Stdout, "id %s, plan %s, label %q. The key is shown only this once: only its SHA-256 is kept.\n", a.ID, a.Plan, a.Label)
		return nil
	}
}

func (c *KeysCommand) list(ctx context.Context, store rappel.KeyStore) error {
	keys, err := store.ListKeys(ctx)
	if err != nil {
		return fmt.Errorf("listing keys: %w", err)
	}
	tw := tabwriter.NewWriter(c.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPLAN\tCREATED\tREVOKED\tLABEL")
	for _, a := range keys {
		revoked := "-"
		if a.Revoked {
			revoked = a.RevokedAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.ID, a.Plan, a.Created.UTC().Format(time.RFC3339), revoked, a.Label)
	}
	return tw.Flush()
}

func (c *KeysCommand) revoke(ctx context.Context, store rappel.KeyStore) error {
	a, err := store.RevokeKey(ctx, c.ID, c.Now())
	if err != nil {
		if rappel.ErrorCode(err) == rappel.ENOTFOUND {
			return errors.New(rappel.ErrorMessage(err))
		}
		return fmt.Errorf("revoking key: %w", err)
	}
	fmt.Fprintf(c.Stdout, "revoked %s (plan %s, label %q) at %s; a running server refuses it within seconds.\n",
		a.ID, a.Plan, a.Label, a.RevokedAt.UTC().Format(time.RFC3339))
	return nil
}

// startKeys gives srv its keys and limits: the issued keys of keyStore with
// the --api-keys development keys, and the monthly counts kept in quota,
// loaded now and pushed every interval (0: edge.DefaultUsageInterval). The
// returned stop,
// called once the server has drained, pushes the counts a last time; it
// must run before quota closes.
func startKeys(ctx context.Context, keyStore rappel.KeyStore, apiKeys []string, quota rappel.QuotaStore, interval time.Duration, srv *edge.Server, log *slog.Logger) (stop func(), err error) {
	if interval <= 0 {
		interval = edge.DefaultUsageInterval
	}
	keys := edge.NewKeyService(keyStore, edge.NewStaticKeys(apiKeys))
	keys.Logger = log
	if err := keys.Open(ctx); err != nil {
		return nil, fmt.Errorf("opening API keys: %w", err)
	}
	srv.Keys = keys
	srv.Quota = quota
	if err := srv.LoadUsage(ctx); err != nil {
		keys.Close()
		return nil, err
	}
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.PersistUsage(pctx, interval)
	}()
	return func() {
		cancel()
		<-done
		if err := srv.SaveUsage(context.Background()); err != nil {
			log.Error("saving usage", "error", err)
		}
		keys.Close()
	}, nil
}
