// Package jsonx encodes and decodes the service's own JSON (stored values,
// bundle lines, plugin output) with github.com/bytedance/sonic, configured
// to behave as encoding/json, so that the rest of the code depends on
// encoding/json's behaviour and on nothing sonic does differently.
//
// Sonic runs native code (JIT-compiled codecs and SIMD scanning) on amd64,
// and on arm64 from Go 1.20, for the Go versions its release supports (up to
// Go 1.27 for v1.15). On another 64-bit architecture, or with a newer Go,
// its own build constraints select its fallback, which is encoding/json. It
// does not compile at all for 32-bit architectures; there this package's
// build constraints leave sonic out and use encoding/json itself. No build
// tag is needed in any case, and Native reports which one runs.
//
// The contract, wherever it runs (the tests compare sonic with encoding/json
// on every line of the bundle and on fuzzed input):
//
//   - Marshal writes the bytes json.Marshal writes (sonic.ConfigStd: HTML
//     escaped, map keys sorted, invalid UTF-8 replaced by U+FFFD; and the
//     rare output where sonic escapes a control character differently is
//     encoded again by encoding/json). Those bytes are stored, hashed and
//     compared with bytes encoding/json wrote, so they must not depend on
//     the build.
//   - Unmarshal accepts what json.Unmarshal accepts and yields the same
//     value: sonic.ConfigStd validates strings (invalid UTF-8 becomes
//     U+FFFD, raw control characters are refused) and copies each string,
//     so that a string kept from a record does not hold the whole input in
//     memory. When sonic refuses the input, encoding/json decodes it again
//     and has the last word: its error (a *json.SyntaxError or
//     *json.UnmarshalTypeError, with its wording) is the one returned, and
//     should it accept what sonic refused, its value is the one kept. Errors
//     are rare on these paths, so the second decode costs nothing in
//     practice.
//
// Decoding a request body is left to encoding/json by its callers: it is
// small, and its errors are worded for the client.
package jsonx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
)

// codec is what jsonx needs of sonic's configurations: sonic.API has it,
// and so does encodingJSON where sonic does not compile.
type codec interface {
	Marshal(v any) ([]byte, error)
	Unmarshal(data []byte, v any) error
}

// Native reports whether sonic's native code runs in this build; when it
// does not, every function here is encoding/json.
func Native() bool { return native }

// Marshal returns the JSON encoding of v, byte for byte what json.Marshal
// returns.
func Marshal(v any) ([]byte, error) {
	b, err := std.Marshal(v)
	if err != nil || escapesDiffer(b) {
		return json.Marshal(v)
	}
	return b, nil
}

// controlEscape starts the escape of U+0000 to U+000F.
var controlEscape = []byte(`\u000`)

// escapesDiffer reports whether b, sonic's output, may escape a character
// differently from encoding/json: since Go 1.22 encoding/json writes U+0008
// and U+000C as \b and \f, sonic as \u0008 and \u000c. Such strings are
// rare, so the cost is a scan of the output. A backslash written before
// "u0008" in a string looks the same, and is encoded again for nothing.
func escapesDiffer(b []byte) bool {
	for {
		i := bytes.Index(b, controlEscape)
		if i < 0 || i+len(controlEscape) >= len(b) {
			return false
		}
		b = b[i+len(controlEscape):]
		if b[0] == '8' || b[0] == 'c' {
			return true
		}
	}
}

// Unmarshal decodes data into v as json.Unmarshal does, and returns
// json.Unmarshal's error when data is not valid for v. v should be a new
// value: when the input is refused, what v holds is unspecified.
func Unmarshal(data []byte, v any) error {
	if err := std.Unmarshal(data, v); err != nil {
		return stdDecode(v, func(fresh any) error { return json.Unmarshal(data, fresh) })
	}
	return nil
}

// ErrMoreValues is returned by UnmarshalStrict when data holds another JSON
// value after the first.
var ErrMoreValues = errors.New("more than one JSON value")

// UnmarshalStrict is Unmarshal refusing object keys that match no field of
// the destination struct, as a json.Decoder with DisallowUnknownFields does,
// and anything but whitespace after the value.
func UnmarshalStrict(data []byte, v any) error {
	if err := strict.Unmarshal(data, v); err != nil {
		return stdDecode(v, func(fresh any) error {
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.DisallowUnknownFields()
			if err := dec.Decode(fresh); err != nil {
				return err
			}
			rest := bytes.Trim(data[dec.InputOffset():], " \t\r\n")
			switch {
			case len(rest) == 0:
				return nil
			case dec.More():
				return ErrMoreValues
			default:
				return fmt.Errorf("invalid character %q after the JSON value", rest[0])
			}
		})
	}
	return nil
}

// stdDecode runs decode, encoding/json's decoding of the input, into a new
// value of v's type. It returns decode's error; when there is none, the new
// value replaces what v points to.
func stdDecode(v any, decode func(fresh any) error) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return decode(v) // encoding/json's InvalidUnmarshalError
	}
	fresh := reflect.New(rv.Type().Elem())
	if err := decode(fresh.Interface()); err != nil {
		return err
	}
	rv.Elem().Set(fresh.Elem())
	return nil
}
