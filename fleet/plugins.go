package fleet

import (
	"context"
	"fmt"
	"time"

	"github.com/rappel-ca/rappel"
)

// PluginLog keeps, in the shared store, the plugin the fleet's leader
// activated for each source (package kv/postgres), so that its successor
// runs the same: followers need no plugin at all.
type PluginLog interface {
	// PutFleetPlugin records p for its source, refused with
	// rappel.ErrFenced unless node holds the lease under token.
	PutFleetPlugin(ctx context.Context, node string, token int64, p rappel.FleetPlugin) error
	FleetPlugins(ctx context.Context) ([]rappel.FleetPlugin, error)
}

// PluginActivated records a plugin this node activated (a swap, a new
// source), with its signature, for the fleet, when the node leads; a follower's activations
// stay its own until it leads. The registry calls it (plugins.Registry's
// OnActivated); a failure is logged: the plugin runs here all the same.
func (n *Node) PluginActivated(source string, wasm, sig []byte, why string) {
	n.mu.Lock()
	lead, token := n.leader, n.lease.Token
	n.mu.Unlock()
	if !lead || n.Plugins == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := rappel.FleetPlugin{Source: source, SHA256: sha256Hex(wasm), Wasm: wasm, Signature: sig, Why: why}
	if err := n.Plugins.PutFleetPlugin(ctx, n.Name, token, p); err != nil {
		n.Logger.Error("recording the plugin for the fleet; the next leader will not run it", "source", source, "err", err)
		return
	}
	n.Logger.Info("recorded the plugin for the fleet", "source", source, "sha256", p.SHA256)
}

// adoptPlugins gives Adopt every plugin the fleet's leaders activated,
// as the node becomes the leader. One that cannot be adopted is logged:
// the node's own runs instead.
func (n *Node) adoptPlugins(ctx context.Context) error {
	if n.Plugins == nil || n.Adopt == nil {
		return nil
	}
	all, err := n.Plugins.FleetPlugins(ctx)
	if err != nil {
		return fmt.Errorf("reading the fleet's plugins: %w", err)
	}
	for _, p := range all {
		if err := n.Adopt(ctx, p.Source, p.Wasm, p.Signature, p.Why); err != nil {
			n.Logger.Error("running the fleet's plugin", "source", p.Source, "sha256", p.SHA256, "err", err)
		}
	}
	return nil
}
