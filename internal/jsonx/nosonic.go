//go:build 386 || arm || mips || mipsle

package jsonx

import (
	"encoding/json"
	"errors"
)

// Sonic refuses to compile for 32-bit architectures, so there jsonx is
// encoding/json: std and strict refuse everything, and the functions of
// jsonx.go fall back to encoding/json for every input.
var std, strict codec = encodingJSON{}, encodingJSON{}

const native = false

type encodingJSON struct{}

func (encodingJSON) Marshal(v any) ([]byte, error) { return json.Marshal(v) }

func (encodingJSON) Unmarshal([]byte, any) error { return errNoSonic }

var errNoSonic = errors.New("sonic does not run on 32-bit architectures")
