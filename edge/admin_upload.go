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
	"os"
	"strings"
	"sync"
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
// signature ("" when there is none), files of Server.UploadStaging, exactly
// as a file dropped into the watched directory is taken, and says what
// became of it; a refused plugin is an error whose text says why, in a
// sentence. What is left of the files afterwards is deleted.
type UploadPlugin func(ctx context.Context, source, wasmPath, sigPath string) (outcome string, err error)

// RemoveSource stops refreshing a source a plugin's manifest added and
// archives its records with reason, and deletes the source's refused
// plugins; a bundled or unknown source with refused plugins kept has them
// deleted, and nothing else. ErrBundledSource and ErrUnknownSource tell
// the refusals apart.
type RemoveSource func(ctx context.Context, source, reason string) error

// Refusals of RemoveSource.
var (
	ErrBundledSource = errors.New("the source is a bundled one")
	ErrUnknownSource = errors.New("there is no source of this name")
)

// adminPutPlugin answers PUT /admin/plugins/{source}: an upload of a
// signed plugin, checked and tried like one dropped into --plugins-dir.
// Its parts are streamed to files of the staging directory, never held in
// memory, and the uploads taken at once are bounded (admitUpload), reading
// and trying included: each tried plugin is read and compiled in memory.
func (s *Server) adminPutPlugin(w http.ResponseWriter, r *http.Request) error {
	source, err := s.adminSource(w, r)
	if err != nil {
		return err
	}
	release, err := s.admitUpload(r)
	if err != nil {
		return err
	}
	defer release()
	// An upload may take longer than the server's read timeout (64 MiB
	// over a slow link): it is cut when it stops making progress, not at a
	// fixed time (uploadIdle, uploadMax).
	r.Body = &progressBody{ReadCloser: r.Body, rc: http.NewResponseController(w), until: time.Now().Add(uploadMax)}
	takes := s.UploadPlugin != nil && s.Plugins != nil && s.UploadStaging != ""
	staging := ""
	if takes {
		staging = s.UploadStaging
	}
	up, err := readPluginUpload(r, staging)
	if err != nil {
		return err
	}
	defer up.remove()
	if !takes {
		return rappel.Errorf(rappel.EUNAVAILABLE, "This node takes no plugin uploads: the live feeds are off, or it watches no --plugins-dir to keep them in.")
	}
	outcome, err := s.UploadPlugin(r.Context(), source, up.wasm.path, up.sig.path)
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

// Defaults of Server.UploadSlots and Server.UploadBytes: two uploads at
// once, and 128 MiB of bodies, so that the uploads' disk and the memory
// their trials take stay bounded (each trial reads and compiles its
// module).
const (
	DefaultUploadSlots = 2
	DefaultUploadBytes = 128 << 20
)

// maxUploadBody is the largest body an upload is read to: the module, its
// signature and the multipart framing.
const maxUploadBody = maxPluginUpload + 1<<20

// uploadRetryAfter is the Retry-After of an upload refused for want of
// room: the uploads ahead of it take seconds on a fast link.
const uploadRetryAfter = 30 * time.Second

// uploadBudget counts the uploads being taken and the bytes of their
// bodies; its lock also orders the reads of UploadSlots and UploadBytes.
type uploadBudget struct {
	mu    sync.Mutex
	n     int
	bytes int64
}

// admitUpload reserves room for r's upload, its body's declared length
// (maxUploadBody when it declares none), and returns its release; an
// upload over the budget is a 503 with Retry-After rather than a wait,
// since a waiting upload would hold its connection and its client can
// choose when to come back.
func (s *Server) admitUpload(r *http.Request) (func(), error) {
	b := &s.uploads
	b.mu.Lock()
	defer b.mu.Unlock()
	slots := orDefault(s.UploadSlots, DefaultUploadSlots)
	limit := max(orDefault(s.UploadBytes, DefaultUploadBytes), maxUploadBody)
	want := int64(maxUploadBody)
	if r.ContentLength >= 0 && r.ContentLength < want {
		want = r.ContentLength
	}
	switch {
	case b.n >= slots:
		return nil, &rappel.Error{Code: rappel.EUNAVAILABLE, RetryAfter: uploadRetryAfter, Message: fmt.Sprintf(
			"This node is taking %d other plugin uploads, as many as it takes at once; retry in %d s (Retry-After).", b.n, ceilSeconds(uploadRetryAfter))}
	case b.bytes+want > limit:
		return nil, &rappel.Error{Code: rappel.EUNAVAILABLE, RetryAfter: uploadRetryAfter, Message: fmt.Sprintf(
			"This node is taking other plugin uploads (%s of bodies), and this one of %s would take it past the %s it takes at once; retry in %d s (Retry-After).",
			mebibytes(b.bytes), mebibytes(want), mebibytes(limit), ceilSeconds(uploadRetryAfter))}
	}
	b.n++
	b.bytes += want
	return func() {
		b.mu.Lock()
		b.n--
		b.bytes -= want
		b.mu.Unlock()
	}, nil
}

// orDefault is v, or d when v is not set (0 or less).
func orDefault[T int | int64](v, d T) T {
	if v <= 0 {
		return d
	}
	return v
}

// mebibytes says n bytes in MiB, for sentences.
func mebibytes(n int64) string {
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
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
		return rappel.Errorf(rappel.ENOTFOUND, "There is no source named %q on this node, nor a refused plugin kept for it; GET /admin/plugins lists both.", source)
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

// stagedPart is a part of an upload: its file in the staging directory
// ("" when it is absent, or when there is no directory) and its size.
type stagedPart struct {
	path string
	size int64
	seen bool
}

// stagedUpload is an upload's parts as readPluginUpload staged them.
type stagedUpload struct {
	wasm, sig stagedPart
}

// remove deletes what is left of the staged files: nothing once
// UploadPlugin moved them into the plugins dir.
func (u *stagedUpload) remove() {
	for _, p := range []string{u.wasm.path, u.sig.path} {
		if p != "" {
			_ = os.Remove(p)
		}
	}
}

// errStaging marks a failure to write a staged part: the node's disk, not
// the request.
type errStaging struct{ error }

func (e errStaging) Unwrap() error { return e.error }

// stagingWriter is a staged file whose write errors say they are the disk's.
type stagingWriter struct{ f *os.File }

func (w stagingWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err != nil {
		err = errStaging{err}
	}
	return n, err
}

// readPluginUpload reads the multipart body of a plugin upload: the part
// "plugin" (required) and the part "signature" (optional), each once,
// streamed to files of dir, or read and dropped when dir is "" (to check
// the body of a node that takes none). On error nothing is left in dir.
func readPluginUpload(r *http.Request, dir string) (up *stagedUpload, err error) {
	ct := r.Header.Get("Content-Type")
	media, params, perr := mime.ParseMediaType(ct)
	if perr != nil || media != "multipart/form-data" || params["boundary"] == "" {
		return nil, rappel.UnsupportedMediaType(ct)
	}
	up = new(stagedUpload)
	defer func() {
		if err != nil {
			up.remove()
			up = nil
		}
	}()
	mr := multipart.NewReader(io.LimitReader(r.Body, maxUploadBody), params["boundary"])
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return up, unreadable(err)
		}
		name := part.FormName()
		var dst *stagedPart
		switch name {
		case "plugin":
			dst = &up.wasm
		case "signature":
			dst = &up.sig
		default:
			return up, rappel.Invalids(rappel.InvalidExtra(rappel.BodyLoc(name), nil, []string{"plugin", "signature"}))
		}
		if dst.seen {
			return up, rappel.Invalids(rappel.InvalidValue(rappel.BodyLoc(name), "", rappel.Reason{Problem: "is given twice", Fix: "send each part once"}))
		}
		dst.seen = true
		if err := stagePart(dst, dir, io.LimitReader(part, maxPluginUpload+1)); err != nil {
			return up, err
		}
		if dst.size > maxPluginUpload {
			return up, rappel.Invalids(rappel.InvalidTooLong(rappel.BodyLoc(name), "", -1, maxPluginUpload))
		}
	}
	if up.wasm.size == 0 {
		return up, rappel.Invalids(rappel.InvalidMissing(rappel.BodyLoc("plugin"), uploadExample))
	}
	return up, nil
}

// stagePart copies a part into a new file of dir (or nowhere when dir is
// ""), synced, so that the file renamed into the plugins dir is whole on
// disk.
func stagePart(dst *stagedPart, dir string, part io.Reader) error {
	var w io.Writer = io.Discard
	var f *os.File
	if dir != "" {
		var err error
		if f, err = os.CreateTemp(dir, "upload-*"); err != nil {
			return stagingFailed(err)
		}
		dst.path = f.Name()
		w = stagingWriter{f}
	}
	n, err := io.Copy(w, part)
	dst.size = n
	if err == nil && f != nil {
		err = f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			err = errStaging{err}
		}
	} else if f != nil {
		_ = f.Close()
	}
	var se errStaging
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se):
		return stagingFailed(se.error)
	}
	return unreadable(err)
}

// stagingFailed is the 503 of an upload the node could not write to its
// disk; the cause (a path, an errno) goes to the log only, where the
// operator who can free the disk reads it.
func stagingFailed(err error) error {
	return &rappel.Error{Code: rappel.EUNAVAILABLE, Err: err,
		Message: "This node could not keep the upload on the disk of its plugins dir (full, or failing); upload it again once its operator has freed or fixed that disk."}
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
