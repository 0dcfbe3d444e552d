package edge

import (
	"bytes"
	"compress/gzip"
	"embed"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/rappel-ca/rappel"
)

// docsFS holds the page at /docs: its template, its initializer and the
// Swagger UI files the Makefile copies from the pinned npm package
// (docs/package.json) into docs/assets. That directory is generated and
// ignored by git but for a placeholder, so that the package compiles before
// the files are there; the page then answers 503 saying how to build them.
//
//go:embed docs/index.html docs/docs.js all:docs/assets
var docsFS embed.FS

// docsAssets are the files the page cannot work without.
var docsAssets = []string{"assets/swagger-ui-bundle.js", "assets/swagger-ui.css"}

// docsPolicy is the Content-Security-Policy of every /docs response: the
// page loads scripts, styles and images from this node only and may fetch
// nothing but this node ("Try it out"), so no CDN, font service or
// validator can be reached even by mistake. Inline scripts and styles are
// refused too: the initializer is a file, and Swagger UI sets its styles
// through the DOM, which the policy allows (TestDocs_Chromium fails on any
// violation the browser reports).
const docsPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' data:; connect-src 'self'; font-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// staticFile is a file served as it is, with its strong ETag.
type staticFile struct {
	body  []byte
	ctype string
	etag  string
}

func newStaticFile(body []byte, ctype string) *staticFile {
	return &staticFile{body: body, ctype: ctype, etag: etagOf(body)}
}

// docsFiles are the page and its files by their path under /docs/ (the
// page under ""), built on first use: hashing the 2 MB of Swagger UI is
// not worth doing at start for a node whose docs nobody reads.
var docsFiles = sync.OnceValues(func() (map[string]*staticFile, error) {
	files := map[string]*staticFile{}
	err := fs.WalkDir(docsFS, "docs", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") || p == "docs/index.html" {
			return err
		}
		b, err := docsFS.ReadFile(p)
		if err != nil {
			return err
		}
		// make gzips the assets, to keep the binary small; they are
		// served as the browser asks (the compression middleware).
		if name, ok := strings.CutSuffix(p, ".gz"); ok {
			if b, err = gunzip(b); err != nil {
				return fmt.Errorf("reading embedded %s: %w", p, err)
			}
			p = name
		}
		files[strings.TrimPrefix(p, "docs/")] = newStaticFile(b, contentTypeOf(p))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading embedded docs: %w", err)
	}
	page, err := renderDocsPage()
	if err != nil {
		return nil, err
	}
	files[""] = newStaticFile(page, "text/html; charset=utf-8")
	return files, nil
})

// gunzip returns the bytes gzipped in b.
func gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// renderDocsPage fills the page's template with the document's title and
// version, so that the two never disagree.
func renderDocsPage() ([]byte, error) {
	t, err := template.ParseFS(docsFS, "docs/index.html")
	if err != nil {
		return nil, fmt.Errorf("parsing docs page: %w", err)
	}
	var b bytes.Buffer
	data := struct{ Title, Version, SpecURL string }{openAPIInfo.Title, openAPIInfo.Version, "/openapi.json"}
	if err := t.Execute(&b, data); err != nil {
		return nil, fmt.Errorf("rendering docs page: %w", err)
	}
	return b.Bytes(), nil
}

// contentTypeOf is the Content-Type of an embedded file, by extension; the
// page's files are few and known.
func contentTypeOf(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".png":
		return "image/png"
	case ".html":
		return "text/html; charset=utf-8"
	case ".json":
		return "application/json"
	}
	return "text/plain; charset=utf-8"
}

// docsPage answers GET /docs with the page rendering the API description.
func (s *Server) docsPage(w http.ResponseWriter, r *http.Request) error {
	return s.serveDocs(w, r, "")
}

// docsFile answers GET /docs/{file...}: the page's script, styles and
// images. /docs/ is the page too.
func (s *Server) docsFile(w http.ResponseWriter, r *http.Request) error {
	return s.serveDocs(w, r, r.PathValue("file"))
}

func (s *Server) serveDocs(w http.ResponseWriter, r *http.Request, name string) error {
	if err := paramsOf(w).err(); err != nil {
		return err
	}
	files, err := docsFiles()
	if err != nil {
		return err
	}
	for _, a := range docsAssets {
		if files[a] == nil {
			return rappel.Errorf(rappel.EUNAVAILABLE,
				"The documentation page's files were not built into this binary; build it with make, which installs them with npm, or read the API description at /openapi.json.")
		}
	}
	f := files[name]
	if f == nil {
		return rappel.Errorf(rappel.ENOTFOUND,
			"There is no file %s under /docs/; the documentation page is /docs.", rappel.Quote(name))
	}
	h := w.Header()
	h.Set("Content-Security-Policy", docsPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	serveStatic(w, r, f)
	return nil
}

// serveStatic writes f, or a 304 without a body when the request's
// If-None-Match holds its ETag, with the same validators and caching as
// writeJSON's public documents (cache.go): the files change only with the
// binary, and compress marks the ETag of an encoded body.
func serveStatic(w http.ResponseWriter, r *http.Request, f *staticFile) {
	h := w.Header()
	h["Cache-Control"] = headerPublicRead
	if inm, ok := r.Header["If-None-Match"]; ok && !noneMatch(inm, f.etag) {
		h["Etag"] = []string{taggedETag(f.etag, wouldEncode(w, len(f.body)))}
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h["Etag"] = []string{f.etag}
	h.Set("Content-Type", f.ctype)
	h.Set("Content-Length", strconv.Itoa(len(f.body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		// An error here means the client went away; there is no one left
		// to tell.
		_, _ = w.Write(f.body)
	}
}
