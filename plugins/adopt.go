package plugins

import (
	"context"
	"fmt"
)

// fleetOrigin is the origin of a plugin adopted from the fleet.
const fleetOrigin = "fleet"

// Adopt makes wasm the plugin of source without a trial: a plugin the
// leader of the node's fleet activated after every check (see
// OnActivated), which this node, now leading, runs as its predecessor
// did. A plugin whose manifest adds a source adds it here too. It is kept
// in ActiveDir like a swap, with its signature sig (nil for none), which
// VerifyKept checks first: the shared store is no more trusted than the
// data dir. The same plugin already active changes nothing.
func (r *Registry) Adopt(ctx context.Context, source string, wasm, sig []byte, why string) error {
	sha := SHA256(wasm)
	if r.Active(source) == sha {
		return nil
	}
	if r.VerifyKept != nil {
		if err := r.VerifyKept(source, wasm, sig); err != nil {
			return fmt.Errorf("adopting the fleet's plugin for %s: it fails verification with the trusted keys (--plugin-keys): %w", source, err)
		}
	}
	r.mu.Lock()
	s := r.sources[source]
	r.mu.Unlock()
	if s == nil || s.active == nil {
		m, err := ReadManifest(wasm)
		if err == nil && (m == nil || m.Source != source) {
			err = fmt.Errorf("the fleet's plugin for %s carries no manifest for it", source)
		}
		if err != nil {
			return fmt.Errorf("adopting the fleet's plugin for %s: %w", source, err)
		}
		r.addNew(ctx, source, fleetOrigin, wasm, sig, m, nil)
		if r.Active(source) != sha {
			return fmt.Errorf("adopting the fleet's plugin for %s: %s", source, r.Rejection(source))
		}
		return nil
	}
	r.mu.Lock()
	m, err := s.checkUpdate(wasm)
	r.mu.Unlock()
	if err != nil {
		return fmt.Errorf("adopting the fleet's plugin for %s: %w", source, err)
	}
	p, err := r.Host.Load(ctx, source, wasm)
	if err != nil {
		return fmt.Errorf("adopting the fleet's plugin for %s: %w", source, err)
	}
	why = "the fleet's leader activated it: " + why
	r.mu.Lock()
	old, oldManifest := s.active, s.manifest
	s.active, s.since, s.origin, s.why = &entry{plugin: p}, r.Now(), fleetOrigin, why
	s.payload, s.payloadDigest, s.primed, s.baseline = nil, "", nil, nil
	if m != nil {
		s.manifest = m
	}
	r.retire(old)
	r.remember(source, sha, "activated", why)
	kept := activeManifest{SHA256: sha, Since: s.since, Why: why, From: fleetOrigin, Bundled: SHA256(r.bundled[source])}
	if oldManifest != nil {
		kept.Bundled, kept.Added = "", true
	}
	r.mu.Unlock()
	r.persist(source, wasm, sig, kept)
	if oldManifest != nil {
		r.manifestChanged(oldManifest, m)
	}
	r.Logger.Info("running the plugin the fleet's leader activated", "source", source, "sha256", sha)
	return nil
}
