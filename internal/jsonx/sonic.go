//go:build !(386 || arm || mips || mipsle)

package jsonx

import "github.com/bytedance/sonic"

var (
	// std is sonic's encoding/json-compatible configuration.
	std codec = sonic.ConfigStd
	// strict is std refusing unknown fields.
	strict codec = sonic.Config{
		EscapeHTML:            true,
		SortMapKeys:           true,
		CompactMarshaler:      true,
		CopyString:            true,
		ValidateString:        true,
		DisallowUnknownFields: true,
	}.Froze()
)

// native is false where sonic's own build constraints chose its fallback.
const native = sonic.APIKind == sonic.UseSonicJSON
