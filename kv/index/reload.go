package index

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/rappel-ca/rappel"
)

// Reload reads every record of store into a new snapshot built with the
// catalog's Options, swaps it in, and returns the memory of the build to
// the operating system. Readers holding the old snapshot keep it.
func (c *Catalog) Reload(ctx context.Context, store rappel.RecordStore) error {
	c.reload.Lock()
	defer c.reload.Unlock()
	if err := c.reloadLocked(ctx, store); err != nil {
		return err
	}
	// A build allocates several times the snapshot it leaves (about a
	// gigabyte for 41,000 records) and the old snapshot is garbage once its
	// readers finish. Without this the runtime hands that memory back to
	// the OS only slowly, and a node's resident size stays at its peak for
	// minutes after every reload.
	debug.FreeOSMemory()
	return nil
}

// reloadLocked builds and swaps; c.reload must be held. The records and
// the build's scratch are unreachable once it returns, so that the caller
// can free them.
func (c *Catalog) reloadLocked(ctx context.Context, store rappel.RecordStore) error {
	info, err := store.DatasetInfo(ctx)
	if err != nil {
		return fmt.Errorf("reloading the read index: %w", err)
	}
	var recs []*rappel.Record
	if err := store.ForEachRecord(ctx, func(r *rappel.Record) error {
		recs = append(recs, r)
		return nil
	}); err != nil {
		return fmt.Errorf("reloading the read index: reading records: %w", err)
	}
	snap, err := BuildOptions(recs, info, c.Options)
	if err != nil {
		return fmt.Errorf("reloading the read index: %w", err)
	}
	c.Swap(snap)
	return nil
}

// Listener returns the rappel.ChangeListener that keeps c in step with
// store: when records changed it reloads c from store; when only the
// dataset info moved (a refresh that found nothing new) it swaps in the
// current snapshot with the new info, which costs no build.
func (c *Catalog) Listener(store rappel.RecordStore) rappel.ChangeListener {
	return &listener{catalog: c, store: store}
}

type listener struct {
	catalog *Catalog
	store   rappel.RecordStore
}

func (l *listener) DataChanged(ctx context.Context, records bool) error {
	if records {
		return l.catalog.Reload(ctx, l.store)
	}
	c := l.catalog
	c.reload.Lock()
	defer c.reload.Unlock()
	info, err := l.store.DatasetInfo(ctx)
	if err != nil {
		return fmt.Errorf("reading the dataset info: %w", err)
	}
	c.SwapView(c.Current().WithInfo(info))
	return nil
}
