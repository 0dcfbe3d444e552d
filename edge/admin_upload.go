package edge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/rappel-ca/rappel"
)

// maxPluginUpload bounds a plugin uploaded with PUT /admin/plugins/{source}:
// the module and its signature. The bundled modules weigh about 5 MB.
const maxPluginUpload = 64 << 20

// maxRemoveBody bounds the body of DELETE /admin/plugins/{source}: a reason.
const maxRemoveBody = 4 << 10

const (
	uploadExample = "send multipart/form-data with a part 'plugin' (the .wasm) and a part 'signature' (its .minisig), as curl -X PUT -F plugin=@openfda.wasm -F signature=@openfda.wasm.minisig does"
	removeExample = `send a JSON object such as '{"reason": "the agency retired this feed"}'`
)

// Outcomes of an uploaded plugin (UploadPlugin).
const (
	PluginAdded     = "added"     // it added a new source: 201
	PluginActivated = "activated" // it replaced the source's plugin: 200
	PluginHeld      = "held"      // it waits for a payload or an approval: 202
)

// UploadPlugin takes a plugin for source, a module and its minisign
// signature (nil when there is none), exactly as a file dropped into the
// watched directory is taken, and says what became of it; a refused plugin
// is an error whose text says why, in a sentence.
type UploadPlugin func(ctx context.Context, source string, wasm, sig []byte) (outcome string, err error)

// RemoveSource stops refreshing a source a plugin's manifest added and
// archives its records with reason. ErrBundledSource and ErrUnknownSource
// tell the refusals apart.
type RemoveSource func(ctx context.Context, source, reason string) error

// Refusals of RemoveSource.
var (
	ErrBundledSource = errors.New("the source is a bundled one")
	ErrUnknownSource = errors.New("there is no source of this name")
)

// adminPutPlugin answers PUT /admin/plugins/{source}: an upload of a
// signed plugin, checked and tried like one dropped into --plugins-dir.
func (s *Server) adminPutPlugin(w http.ResponseWriter, r *http.Request) error {
	source, err := s.adminSource(w, r)
	if err != nil {
		return err
	}
	// An upload may take longer than the server's read timeout (64 MiB
	// over a slow link): it is cut when it stops making progress, not at a
	// fixed time (uploadIdle, uploadMax).
	r.Body = &progressBody{ReadCloser: r.Body, rc: http.NewResponseController(w), until: time.Now().Add(uploadMax)}
	wasm, sig, err := readPluginUpload(r)
	if err != nil {
		return err
	}
	if s.UploadPlugin == nil || s.Plugins == nil {
		return rappel.Errorf(rappel.EUNAVAILABLE, "This node takes no plugin uploads: the live feeds are off, or it watches no --plugins-dir to keep them in.")
	}
	outcome, err := s.UploadPlugin(r.Context(), source, wasm, sig)
	if err != nil {
		return rappel.Invalids(rappel.InvalidValue(rappel.BodyLoc("plugin"), "",
			rappel.Reason{Problem: "was not activated: " + strings.TrimRight(err.Error(), ". "), Fix: "fix what the sentence names, sign the module again (rappel plugin sign) and upload it again"}))
	}
	status := http.StatusOK
	switch outcome {
	case PluginAdded:
		status = http.StatusCreated
	case PluginHeld:
		status = http.StatusAccepted
	}
	return s.writeStatus(w, r, status, s.Plugins())
}

// adminDeletePlugin answers DELETE /admin/plugins/{source}: the source a
// plugin's manifest added stops being refreshed and its records are
// archived with the reason the body gives.
func (s *Server) adminDeletePlugin(w http.ResponseWriter, r *http.Request) error {
	source, err := s.adminSource(w, r)
	if err != nil {
		return err
	}
	reason, err := decodeRemove(r)
	if err != nil {
		return err
	}
	if s.RemoveSource == nil || s.Plugins == nil {
		return rappel.Errorf(rappel.EUNAVAILABLE, "The live feeds are off on this node (--feeds off), so it has no source to remove.")
	}
	switch err := s.RemoveSource(r.Context(), source, reason); {
	case errors.Is(err, ErrUnknownSource):
		return rappel.Errorf(rappel.ENOTFOUND, "There is no source named %q on this node; GET /admin/plugins lists them.", source)
	case errors.Is(err, ErrBundledSource):
		return rappel.BadRequest(fmt.Sprintf("%s is a source this binary bundles, and cannot be removed", source), "remove only a source a plugin's manifest added; stop a bundled feed with the server's flags")
	case err != nil:
		return err
	}
	return s.writeStatus(w, r, http.StatusOK, s.Plugins())
}

// adminSource checks the admin key and the {source} of an admin plugins
// route.
func (s *Server) adminSource(w http.ResponseWriter, r *http.Request) (string, error) {
	if err := s.authenticateAdmin(r); err != nil {
		return "", err
	}
	if err := paramsOf(w).err(); err != nil {
		return "", err
	}
	source := r.PathValue("source")
	if !sourceName.MatchString(source) {
		return "", rappel.Invalids(rappel.InvalidValue(rappel.PathLoc("source"), source,
			rappel.Reason{Problem: "is not a source name", Fix: "use a source of GET /admin/plugins, such as hcdump, or the source a plugin's manifest names"}))
	}
	return source, nil
}

// An upload's body is read as long as it makes progress: each read may
// wait uploadIdle for bytes, and the whole body arrives within uploadMax
// (64 MiB at about 110 KB/s).
const (
	uploadIdle = 10 * time.Second
	uploadMax  = 10 * time.Minute
)

// progressBody moves the connection's read deadline on at every read.
type progressBody struct {
	io.ReadCloser
	rc    *http.ResponseController
	until time.Time
}

func (b *progressBody) Read(p []byte) (int, error) {
	deadline := time.Now().Add(uploadIdle) // the connection's clock, not s.Now
	if deadline.After(b.until) {
		deadline = b.until
	}
	_ = b.rc.SetReadDeadline(deadline)
	_ = b.rc.SetWriteDeadline(b.until.Add(time.Minute))
	return b.ReadCloser.Read(p)
}

// unreadable is the 400 of a multipart body that could not be read, in
// words of the request: never the socket's addresses an I/O error names.
func unreadable(err error) error {
	var ne net.Error
	why := "it is cut short or not well-formed multipart"
	if errors.As(err, &ne) && ne.Timeout() {
		why = fmt.Sprintf("it stopped arriving: no byte came for %d s, or the whole body took more than %d minutes", int(uploadIdle/time.Second), int(uploadMax/time.Minute))
	}
	return rappel.BadRequest("the multipart body could not be read: "+why, uploadExample)
}

// readPluginUpload reads the multipart body of a plugin upload: the part
// "plugin" (required) and the part "signature" (optional), each once.
func readPluginUpload(r *http.Request) (wasm, sig []byte, err error) {
	ct := r.Header.Get("Content-Type")
	media, params, perr := mime.ParseMediaType(ct)
	if perr != nil || media != "multipart/form-data" || params["boundary"] == "" {
		return nil, nil, rappel.UnsupportedMediaType(ct)
	}
	mr := multipart.NewReader(io.LimitReader(r.Body, maxPluginUpload+1<<20), params["boundary"])
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, unreadable(err)
		}
		name := part.FormName()
		var dst *[]byte
		switch name {
		case "plugin":
			dst = &wasm
		case "signature":
			dst = &sig
		default:
			return nil, nil, rappel.Invalids(rappel.InvalidExtra(rappel.BodyLoc(name), nil, []string{"plugin", "signature"}))
		}
		if *dst != nil {
			return nil, nil, rappel.Invalids(rappel.InvalidValue(rappel.BodyLoc(name), "", rappel.Reason{Problem: "is given twice", Fix: "send each part once"}))
		}
		b, err := io.ReadAll(io.LimitReader(part, maxPluginUpload+1))
		if err != nil {
			return nil, nil, unreadable(err)
		}
		if len(b) > maxPluginUpload {
			return nil, nil, rappel.Invalids(rappel.InvalidTooLong(rappel.BodyLoc(name), "", -1, maxPluginUpload))
		}
		*dst = b
	}
	if len(wasm) == 0 {
		return nil, nil, rappel.Invalids(rappel.InvalidMissing(rappel.BodyLoc("plugin"), uploadExample))
	}
	return wasm, sig, nil
}

// decodeRemove reads the removal's body: {"reason": "..."}.
func decodeRemove(r *http.Request) (string, error) {
	var reason *string
	items, err := decodeFields(r, maxRemoveBody, removeExample, []string{"reason"}, map[string]any{"reason": &reason})
	switch {
	case err != nil:
		return "", err
	case len(items) > 0:
		return "", rappel.Invalids(items...)
	case reason == nil || strings.TrimSpace(*reason) == "":
		return "", rappel.Invalids(rappel.InvalidMissing(rappel.BodyLoc("reason"), removeExample))
	case len(*reason) > 500:
		return "", rappel.Invalids(rappel.InvalidTooLong(rappel.BodyLoc("reason"), *reason, len(*reason), 500))
	}
	return strings.TrimSpace(*reason), nil
}
