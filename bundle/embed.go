//go:build !nobundle

package bundle

import "embed"

// The partial and raw records (_partials, _raw) are left out: the
// bundle's sstables hold them, which a node loads instead; the build
// reads them from the bundle dir (README, "The embedded bundle").
//
//go:embed data
var data embed.FS
