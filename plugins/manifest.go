package plugins

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/rappel-ca/rappel"
)

// Manifest describes a source a plugin adds: what the node fetches, how
// often, what agency its records are of and how they merge with the
// others'. It travels inside the module, as a custom section named
// ManifestSection (rappel plugin manifest writes it), so that the
// signature over the module covers it: a node takes a new source only from
// a plugin it trusts. The bundled sources have none; their feeds are the
// server's flags.
type Manifest struct {
	// Source is the source's name: the plugin file's (<source>.wasm), the
	// prefix of its keys in the store, the name /health shows.
	Source string `json:"source"`
	// Agency is one the API knows (by name alone), or a new one named in
	// English and French, which the agency filter, the statistics and the
	// API description then accept.
	Agency rappel.Agency `json:"agency"`
	// RecordIDPrefix starts every record_id the plugin emits ("fda-"); a
	// record without it is refused. Sources that merge "own" records
	// cannot share one.
	RecordIDPrefix string `json:"record_id_prefix"`
	// Documents are fetched whole at every refresh and handed to the
	// plugin under /in by name.
	Documents []ManifestDocument `json:"documents"`
	// ConditionalGet sends the validators (ETag, Last-Modified) of the
	// last fetch, so that an unchanged document costs a 304; true when
	// absent. Turn it off for an upstream whose validators lie.
	ConditionalGet *bool `json:"conditional_get,omitempty"`
	// Interval is the least time between two refreshes of the source, as
	// a Go duration ("1h"); the node's refresh interval when absent, and
	// at least a minute.
	Interval string `json:"interval,omitempty"`
	// Merge is "own" (the default): the plugin's records stand alone and
	// must be complete; or "enrich": they add fields to records other
	// sources create, by record_id, and none stands alone.
	Merge string `json:"merge,omitempty"`
}

// ManifestDocument is one upstream document of a manifest's source.
type ManifestDocument struct {
	// Name is the document's file name under the plugin's /in.
	Name string `json:"name"`
	URL  string `json:"url"`
	// Format is json, csv, xml or text: a body plainly not in it (an HTML
	// error page for a JSON document) fails the fetch rather than the
	// plugin. From Name's extension when absent, else text.
	Format string `json:"format,omitempty"`
	// MaxBytes caps the document after decompression; a larger one fails
	// the refresh. DefaultDocumentMax when absent, at most MaxDocumentMax.
	MaxBytes int64 `json:"max_bytes,omitempty"`
}

// ManifestSection is the name of the custom section holding a plugin's
// manifest, as JSON.
const ManifestSection = "rappel.manifest"

// Merge modes of a manifest.
const (
	MergeOwn    = "own"
	MergeEnrich = "enrich"
)

// Limits of a manifest's documents.
const (
	DefaultDocumentMax = 64 << 20
	MaxDocumentMax     = 1 << 30
	maxDocuments       = 16
	maxManifestBytes   = 64 << 10
	minInterval        = time.Minute
)

var (
	sourceNamePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{1,31}$`)
	prefixPattern     = regexp.MustCompile(`^[a-z0-9]{1,16}-$`)
	docNamePattern    = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
	docFormats        = rappel.Vocabulary{"json", "csv", "xml", "text"}
)

// ParseManifest reads a manifest written as JSON, strictly (an unknown
// field is an error, so that a misspelt one is not silently ignored), and
// validates it.
func ParseManifest(b []byte) (*Manifest, error) {
	if len(b) > maxManifestBytes {
		return nil, fmt.Errorf("the manifest is %d bytes; it may be %d at most", len(b), maxManifestBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	m := new(Manifest)
	if err := dec.Decode(m); err != nil {
		return nil, fmt.Errorf("the manifest is not the JSON object plugins/ABI.md describes: %v", err)
	}
	if dec.More() {
		return nil, errors.New("the manifest has more after its JSON object; give one object")
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// Validate reports the first setting of m that cannot work, in a sentence
// saying how to fix it, and fills in the defaults of those left out.
func (m *Manifest) Validate() error {
	switch {
	case !sourceNamePattern.MatchString(m.Source):
		return fmt.Errorf("the manifest's source %q must be 2 to 32 lower-case letters, digits and _, starting with a letter, such as \"openfda\"", m.Source)
	case m.Merge == "":
		m.Merge = MergeOwn
	case m.Merge != MergeOwn && m.Merge != MergeEnrich:
		return fmt.Errorf("the manifest's merge %q must be %q (records that stand alone) or %q (fields added to other sources' records)", m.Merge, MergeOwn, MergeEnrich)
	}
	if !prefixPattern.MatchString(m.RecordIDPrefix) && m.Merge == MergeOwn {
		return fmt.Errorf("the manifest's record_id_prefix %q must be 1 to 16 lower-case letters or digits and a hyphen, such as \"fda-\"", m.RecordIDPrefix)
	}
	if m.RecordIDPrefix != "" && !prefixPattern.MatchString(m.RecordIDPrefix) {
		return fmt.Errorf("the manifest's record_id_prefix %q must be 1 to 16 lower-case letters or digits and a hyphen, or absent for a source that enriches", m.RecordIDPrefix)
	}
	if err := m.validateAgency(); err != nil {
		return err
	}
	if m.Interval != "" {
		d, err := time.ParseDuration(m.Interval)
		if err != nil || d < minInterval {
			return fmt.Errorf("the manifest's interval %q must be a duration of a minute or more, such as \"1h\"", m.Interval)
		}
	}
	if m.ConditionalGet == nil {
		yes := true
		m.ConditionalGet = &yes
	}
	return m.validateDocuments()
}

// validateAgency checks the agency: a known one needs its name only, a new
// one its full names too.
func (m *Manifest) validateAgency() error {
	if rappel.IsAgency(m.Agency.Name) && m.Agency.EN == "" && m.Agency.FR == "" {
		return nil
	}
	if err := m.Agency.Validate(); err != nil {
		return fmt.Errorf("the manifest's agency: %w (name a known one, %s, or a new one with \"en\" and \"fr\")", err, rappel.KnownAgencies())
	}
	return nil
}

func (m *Manifest) validateDocuments() error {
	if len(m.Documents) == 0 || len(m.Documents) > maxDocuments {
		return fmt.Errorf("the manifest lists %d documents; list 1 to %d, each with a name and a URL", len(m.Documents), maxDocuments)
	}
	seen := map[string]bool{}
	for i := range m.Documents {
		d := &m.Documents[i]
		switch {
		case !docNamePattern.MatchString(d.Name):
			return fmt.Errorf("the manifest's document name %q must be 1 to 64 lower-case letters, digits and . _ -, such as \"food.json\"", d.Name)
		case seen[d.Name]:
			return fmt.Errorf("the manifest lists the document %q twice; give each a name of its own", d.Name)
		case d.MaxBytes < 0 || d.MaxBytes > MaxDocumentMax:
			return fmt.Errorf("document %s: max_bytes %d must be between 1 and %d", d.Name, d.MaxBytes, int64(MaxDocumentMax))
		}
		seen[d.Name] = true
		if err := checkDocumentURL(d.URL); err != nil {
			return fmt.Errorf("document %s: %w", d.Name, err)
		}
		if d.Format == "" {
			d.Format = formatOfName(d.Name)
		}
		if !docFormats.Has(d.Format) {
			return fmt.Errorf("document %s: format %q must be one of %s", d.Name, d.Format, docFormats)
		}
		if d.MaxBytes == 0 {
			d.MaxBytes = DefaultDocumentMax
		}
	}
	return nil
}

func checkDocumentURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.User != nil {
		return fmt.Errorf("the URL %q must be an http or https URL with a host and no user name", raw)
	}
	return nil
}

// formatOfName guesses a document's format from its extension.
func formatOfName(name string) string {
	for _, f := range docFormats {
		if strings.HasSuffix(name, "."+f) {
			return f
		}
	}
	return "text"
}

// IntervalOr returns the manifest's interval, or def when it sets none.
func (m *Manifest) IntervalOr(def time.Duration) time.Duration {
	if d, err := time.ParseDuration(m.Interval); err == nil && d >= minInterval {
		return d
	}
	return def
}

// The module framing: a magic number and a version, then sections, each an
// id byte and a LEB128 size; a custom section (id 0) starts with its name,
// a LEB128 length and bytes.
var wasmHeader = []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}

// ErrNotModule is returned by ReadManifest and EmbedManifest for bytes that
// are not a WebAssembly module's, framing and all.
var ErrNotModule = errors.New("the file is not a WebAssembly module")

// section is one section of a module: its id, where its bytes start and
// end in the module (header included), and a custom section's name and
// payload.
type section struct {
	id         byte
	start, end int
	name       string
	payload    []byte
}

// sections splits a module into its sections, checking only the framing.
func sections(wasm []byte) ([]section, error) {
	if !bytes.HasPrefix(wasm, wasmHeader) {
		return nil, fmt.Errorf("%w (version 1): its first 8 bytes are not \\0asm 1", ErrNotModule)
	}
	var out []section
	for off := len(wasmHeader); off < len(wasm); {
		start := off
		id := wasm[off]
		size, n := binary.Uvarint(wasm[off+1:])
		if n <= 0 || n > 5 || size > uint64(len(wasm)-off-1-n) {
			return nil, fmt.Errorf("%w: its section at byte %d has a size that runs past the end of the file (a truncated or corrupt module)", ErrNotModule, start)
		}
		body := wasm[off+1+n : off+1+n+int(size)]
		off += 1 + n + int(size)
		s := section{id: id, start: start, end: off}
		if id == 0 {
			l, k := binary.Uvarint(body)
			if k <= 0 || k > 5 || l > uint64(len(body)-k) {
				return nil, fmt.Errorf("%w: its custom section at byte %d has a name that runs past its end (a corrupt module)", ErrNotModule, start)
			}
			s.name, s.payload = string(body[k:k+int(l)]), body[k+int(l):]
		}
		out = append(out, s)
	}
	return out, nil
}

// ReadManifest returns the manifest a module carries, validated; nil and
// no error when it carries none. A module with two is refused: which one
// would count is a question nobody should have to answer.
func ReadManifest(wasm []byte) (*Manifest, error) {
	secs, err := sections(wasm)
	if err != nil {
		return nil, err
	}
	var found *section
	for i := range secs {
		if secs[i].id == 0 && secs[i].name == ManifestSection {
			if found != nil {
				return nil, fmt.Errorf("the module carries two %s sections; write it again with rappel plugin manifest, which keeps one", ManifestSection)
			}
			found = &secs[i]
		}
	}
	if found == nil {
		return nil, nil
	}
	m, err := ParseManifest(found.payload)
	if err != nil {
		return nil, fmt.Errorf("the module's manifest: %w", err)
	}
	return m, nil
}

// EmbedManifest returns wasm with m as its manifest section, in place of
// any it carried. Sign the result: the signature must cover the manifest.
func EmbedManifest(wasm []byte, m *Manifest) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	secs, err := sections(wasm)
	if err != nil {
		return nil, err
	}
	js, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(wasm)+len(js)+32)
	out = append(out, wasmHeader...)
	for _, s := range secs {
		if s.id == 0 && s.name == ManifestSection {
			continue
		}
		out = append(out, wasm[s.start:s.end]...)
	}
	body := binary.AppendUvarint(nil, uint64(len(ManifestSection)))
	body = append(append(body, ManifestSection...), js...)
	out = append(out, 0)
	out = binary.AppendUvarint(out, uint64(len(body)))
	return append(out, body...), nil
}
