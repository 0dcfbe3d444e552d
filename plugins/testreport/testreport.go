// Package testreport tests a candidate plugin as the host would on an
// input, for rappel plugin test: Test runs it, and the plugin it is
// compared with, through a plugins.Host and judges each run as the server
// judges a candidate's; Report is what it found, written as JSON or as
// text (WriteText). The command reads its flags and files, builds the
// host and chooses what to compare with.
package testreport

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins"
)

// Report is what rappel plugin test says of a candidate plugin.
type Report struct {
	Plugin     string            `json:"plugin"`
	SHA256     string            `json:"sha256,omitempty"`
	Source     string            `json:"source"`
	Partial    bool              `json:"partial"`
	Manifest   *plugins.Manifest `json:"manifest,omitempty"`
	Input      string            `json:"input"`
	InputFiles int               `json:"input_files"`
	InputBytes int64             `json:"input_bytes"`
	Stop       string            `json:"stop"`
	Duration   float64           `json:"duration_seconds"`
	Accepted   int               `json:"accepted"`
	Refused    int               `json:"refused"`
	Problems   []rappel.Problem  `json:"problems"`
	Signature  string            `json:"signature"`
	Log        []string          `json:"log,omitempty"`
	Against    *Against          `json:"against,omitempty"`
	Verdict    string            `json:"verdict"`
	Reason     string            `json:"reason,omitempty"`
}

// Against is the run of the plugin the candidate is compared with.
type Against struct {
	Plugin   string  `json:"plugin"`
	SHA256   string  `json:"sha256"`
	Accepted int     `json:"accepted"`
	Refused  int     `json:"refused"`
	Lost     int     `json:"lost"`
	Duration float64 `json:"duration_seconds"`
	// Diff is what the candidate changed of the records, field by field.
	Diff plugins.DiffSummary `json:"diff"`
	// Failed says why the plugin compared with failed on the input: the
	// candidate is then judged alone, as the server judges one on the
	// upstream's current payload.
	Failed string `json:"failed,omitempty"`
}

// Judge sets the report's verdict: rejected with err's sentence when err
// is not nil, held when the candidate changed more than maxChange of the
// records in a field, accepted otherwise.
func (r *Report) Judge(err error, maxChange float64) {
	r.Verdict = "accepted"
	switch {
	case err != nil:
		r.Verdict, r.Reason = "rejected", err.Error()
	case r.Against != nil:
		if why := r.Against.Diff.Exceeds(maxChange); why != "" {
			r.Verdict, r.Reason = "held", why
		}
	}
}

// Test runs plugins for Source on Payload through Host and judges their
// runs as the server does.
type Test struct {
	Host    *plugins.Host
	Source  string
	Payload *plugins.Payload
	// Manifest is the candidate's, when it adds a source; nil otherwise.
	Manifest *plugins.Manifest
}

// Run loads and runs the module at path (or wasm, when given) and fills
// rep with the candidate's outcome when rep is not nil. The error says,
// in a sentence for the report, why the module is not usable or its run
// failed.
func (t *Test) Run(ctx context.Context, path string, wasm []byte, rep *Report) (*plugins.Verdict, error) {
	if wasm == nil {
		var err error
		if wasm, err = os.ReadFile(path); err != nil {
			return nil, fmt.Errorf("reading plugin: %w", err)
		}
	}
	p, err := t.Host.Load(ctx, t.Source, wasm)
	if err != nil {
		return nil, fmt.Errorf("it is not a usable module: %w", err)
	}
	defer p.Close(context.WithoutCancel(ctx))
	res, err := p.Run(ctx, t.Payload)
	if rep != nil {
		rep.SHA256 = p.SHA256
		if res != nil {
			rep.Duration = res.Duration.Seconds()
			rep.Problems = append(rep.Problems, res.Problems...)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("its run failed: %w", err)
	}
	v := plugins.JudgeManifest(t.Source, res, t.Manifest, plugins.DefaultPartial()[t.Source])
	if rep != nil {
		rep.Accepted, rep.Refused, rep.Problems = len(v.Records), v.Refused, append([]rappel.Problem{}, v.Problems...)
	}
	return v, nil
}

// Compare runs the plugin at path (or wasm, when given) on the same
// payload as the candidate, whose verdict is v, records the comparison in
// rep.Against and returns the plugin's baseline. A plugin that fails on
// the payload yields no baseline and no error: as the server does with
// the upstream's current payload when its active plugin fails on it, the
// candidate is judged alone, since only a new plugin can make that
// refresh succeed.
func (t *Test) Compare(ctx context.Context, path string, wasm []byte, rep *Report, v *plugins.Verdict) *plugins.Baseline {
	start := time.Now()
	av, err := t.Run(ctx, path, wasm, nil)
	if err != nil {
		rep.Against = &Against{Plugin: path, Duration: time.Since(start).Seconds(), Failed: err.Error()}
		if sum, ok := shaOf(wasm, path); ok {
			rep.Against.SHA256 = sum
		}
		return nil
	}
	base := plugins.NewBaseline("", av)
	lost, _ := base.Lost(v)
	rep.Against = &Against{Plugin: path, Accepted: len(av.Records), Refused: av.Refused, Lost: lost, Duration: time.Since(start).Seconds(),
		Diff: plugins.Diff(av.Records, v.Records)}
	if sum, ok := shaOf(wasm, path); ok {
		rep.Against.SHA256 = sum
	}
	return base
}

// shaOf is the digest of wasm, or of the file at path.
func shaOf(wasm []byte, path string) (string, bool) {
	if wasm == nil {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", false
		}
		wasm = b
	}
	return plugins.SHA256(wasm), true
}
