//go:build nobundle

package bundle

import "embed"

// data is empty in a binary built with the nobundle tag: the bundle
// step's own rappel, which writes bundle/data and so must not hold it.
// Were it embedded there, every bundle would make that binary differ from
// the last one, and the Makefile, which keys the bundle by that binary's
// bytes, would build the bundle again at every make.
var data embed.FS
