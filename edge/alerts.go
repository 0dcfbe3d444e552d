package edge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/idn"
)

// domainNames writes the domains of e-mail addresses and webhook hosts in
// ASCII for the domain's validation, which takes it as a parameter so as
// to import the standard library only (RATIONALE.md, the domain package).
var domainNames rappel.DomainNames = idn.Names{}

// subscribeFields are the body fields of POST /recall/alerts/subscribe:
// the filters a saved search takes under their Field names.
var subscribeFields = slices.Concat([]string{"email", "q"}, bodyFilters(true), []string{"lang"})

// bodyFilters are the names of the filters a request body takes: those
// InAlerts under their Field names for a subscription (alerts), every
// filter under its Param name for a webhook.
func bodyFilters(alerts bool) []string {
	var names []string
	for _, f := range rappel.Filters {
		switch {
		case alerts && f.InAlerts:
			names = append(names, f.Field)
		case !alerts:
			names = append(names, f.Param)
		}
	}
	return names
}

// filterTargets adds to dst, for decodeFields, where each filter named by
// bodyFilters(alerts) is decoded to in fv.
func filterTargets(dst map[string]any, fv *rappel.FilterValues, alerts bool) map[string]any {
	for i := range rappel.Filters {
		f := &rappel.Filters[i]
		switch {
		case alerts && f.InAlerts:
			dst[f.Field] = f.Of(fv)
		case !alerts:
			dst[f.Param] = f.Of(fv)
		}
	}
	return dst
}

// maxSubscribeBody bounds the subscribe body: its fields are short.
const maxSubscribeBody = 8 << 10

// alerts returns the alert service, or a 503 when the node has none.
func (s *Server) alerts() (rappel.Alerts, error) {
	if s.Alerts == nil {
		return nil, rappel.Errorf(rappel.EUNAVAILABLE, "E-mail alerts are not enabled on this server.")
	}
	return s.Alerts, nil
}

// subscribed is the body of a subscribe answer. token is the name the
// contract gives the unsubscribe token; unsubscribe_token, the same value,
// names it for what it is, since the confirmation token travels only in
// the e-mail.
type subscribed struct {
	Status           string `json:"status"`
	Token            string `json:"token"`
	UnsubscribeToken string `json:"unsubscribe_token"`
}

// subscribe answers POST /recall/alerts/subscribe.
func (s *Server) subscribe(w http.ResponseWriter, r *http.Request) error {
	if err := paramsOf(w).err(); err != nil {
		return err
	}
	svc, err := s.alerts()
	if err != nil {
		return err
	}
	req, err := decodeSubscribe(r)
	if err != nil {
		return err
	}
	req.UserAgent = r.UserAgent()
	if x := exchangeOf(w); x != nil && x.key != nil {
		req.KeyID = x.key.ID
	}
	res, err := svc.Subscribe(r.Context(), req)
	var le *rappel.LimitError
	if errors.As(err, &le) {
		w.Header().Set(headerRetryAfter, strconv.FormatInt(ceilSeconds(le.RetryAfter), 10))
		return le.Err
	}
	if err != nil {
		return err
	}
	return s.writeValue(w, r, subscribed{Status: res.Status, Token: res.Token, UnsubscribeToken: res.Token})
}

// decodeSubscribe reads the body as a JSON object of nullable strings.
// Malformed JSON is a 422 of its own; otherwise the body's problems field
// by field (unknown fields, values that are not strings or not text) and
// those SubscribeRequest.Validate finds in the other fields are 422 items
// of one answer, at ["body", ...], so that the client sees every problem
// at once (docs/api.md, E-mail alerts). When it returns a request, the
// decoding found nothing wrong; Validate checks the values.
func decodeSubscribe(r *http.Request) (*rappel.SubscribeRequest, error) {
	req := &rappel.SubscribeRequest{}
	items, err := decodeFields(r, maxSubscribeBody, subscribeExample, subscribeFields, filterTargets(map[string]any{"email": &req.Email, "q": &req.Q,
		"lang": &req.Lang}, &req.Filters, true))
	if err != nil {
		return nil, err
	}
	if len(items) > 0 {
		_, _, _, verr := req.Validate(domainNames)
		return nil, invalidTogether(items, verr)
	}
	return req, nil
}

// invalidTogether returns the 422 of items, the decoder's, and of the
// items of verr, a validation of the fields the decoder took, but those at
// a field items name already: a field the decoder refused is left unset,
// and its validation would report it again as missing.
func invalidTogether(items []rappel.Invalid, verr error) *rappel.Error {
	var e *rappel.Error
	if errors.As(verr, &e) {
		for _, it := range e.Items {
			if !slices.ContainsFunc(items, func(d rappel.Invalid) bool { return slices.Equal(d.Loc, it.Loc) }) {
				items = append(items, it)
			}
		}
	}
	return rappel.Invalids(items...)
}

// decodeFields reads the body, at most max bytes, as a JSON object whose
// fields are those of dst, each decoded into its pointer: a **string, or
// a **[]string. It returns the problems of single fields (unknown fields,
// values of the wrong type, strings holding bytes that are not UTF-8 or
// half a surrogate pair) as items at ["body", ...], leaving those fields
// unset, for the caller to answer with its own items; err refuses the
// body whole (415, unreadable, too long, not a JSON object: example is
// the fix).
func decodeFields(r *http.Request, max int64, example string, fields []string, dst map[string]any) ([]rappel.Invalid, error) {
	if err := checkJSONBody(r); err != nil {
		return nil, err
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, max+1))
	if err != nil {
		return nil, errUnreadableBody
	}
	if int64(len(body)) > max {
		return nil, rappel.Invalids(rappel.InvalidTooLong(rappel.BodyLoc(""), "", -1, int(max)))
	}
	raw, err := bodyObject(body, example)
	if err != nil {
		return nil, err
	}
	var items []rappel.Invalid
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		p, ok := dst[k]
		if !ok {
			items = append(items, rappel.InvalidExtra(rappel.BodyLoc(k), nil, fields))
			continue
		}
		// Decoding would turn what is not text into U+FFFD unseen.
		if why, bad := rappel.BadJSONText(raw[k]); bad {
			items = append(items, rappel.InvalidValue(rappel.BodyLoc(k), nil, why))
			continue
		}
		if err := json.Unmarshal(raw[k], p); err != nil {
			what := "a string"
			if _, list := p.(**[]string); list {
				what = "an array of strings"
			} else if _, flag := p.(**bool); flag {
				what = "true or false"
			}
			items = append(items, rappel.InvalidValue(rappel.BodyLoc(k), nil,
				rappel.Reason{Problem: "is not " + what, Fix: "send " + what + ", or null to leave it out"}))
		}
	}
	return items, nil
}

// checkJSONBody refuses with a 415 a body whose Content-Type is not JSON:
// application/json or an application/…+json type, with no parameter but
// charset=utf-8. A form or text/plain body is what a page on another site
// can send without asking; refusing it keeps such posts out. A request
// without a Content-Type is read as JSON, the only format the endpoint
// reads: the body must still parse as a JSON object.
func checkJSONBody(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil
	}
	media, params, err := mime.ParseMediaType(ct)
	ok := err == nil && (media == "application/json" || strings.HasPrefix(media, "application/") && strings.HasSuffix(media, "+json"))
	for k, v := range params {
		ok = ok && k == "charset" && strings.EqualFold(v, "utf-8")
	}
	if !ok {
		return rappel.UnsupportedMediaType(ct)
	}
	return nil
}

// subscribeExample is the fix of a body that is not a JSON object.
const subscribeExample = `send a JSON object such as '{"email": "name@example.ca", "q": "cheese listeria"}'`

// tokenRequest reads the token of a confirm or unsubscribe link and
// returns it with the alert service.
func (s *Server) tokenRequest(w http.ResponseWriter) (string, rappel.Alerts, error) {
	p := paramsOf(w)
	token := p.required("token")
	if err := p.err(); err != nil {
		return "", nil, err
	}
	svc, err := s.alerts()
	return token, svc, err
}

// emailLink is a link of the alert e-mails, which changes a subscription:
// act does it; form is the page whose one button POSTs back to the link;
// done is the page shown after the POST.
type emailLink struct {
	act        func(r *http.Request, svc rappel.Alerts, token string) (*rappel.UnsubscribeResult, error)
	form, done *template.Template
}

var (
	// confirmLink is /recall/alerts/confirm, of the confirmation e-mail.
	confirmLink = emailLink{
		act: func(r *http.Request, svc rappel.Alerts, token string) (*rappel.UnsubscribeResult, error) {
			return svc.Confirm(r.Context(), token, r.UserAgent())
		},
		form: confirmFormPage, done: confirmedPage,
	}
	// unsubscribeLink is /recall/alerts/unsubscribe, of every e-mail.
	unsubscribeLink = emailLink{
		act: func(r *http.Request, svc rappel.Alerts, token string) (*rappel.UnsubscribeResult, error) {
			return svc.Unsubscribe(r.Context(), token)
		},
		form: unsubscribeFormPage, done: unsubscribedPage,
	}
)

// linkGet answers GET and HEAD of link. Only a client asking for JSON
// acts with a GET; anything else (a browser, a mail scanner, a link
// checker sending */* or no Accept) gets the page whose one button POSTs,
// so that a link followed by a machine confirms or unsubscribes no one.
// HEAD never acts: it answers as the page would.
func (s *Server) linkGet(link emailLink) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		token, svc, err := s.tokenRequest(w)
		if err != nil {
			return err
		}
		if r.Method == http.MethodHead || !asksJSON(r) {
			return writeHTMLPage(w, r, link.form, map[string]string{"Token": token})
		}
		res, err := link.act(r, svc, token)
		if err != nil {
			return err
		}
		return s.writeValue(w, r, res)
	}
}

// linkPost answers POST of link: the page's button and, for unsubscribe,
// the RFC 8058 one-click unsubscribe. The body is ignored.
func (s *Server) linkPost(link emailLink) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		token, svc, err := s.tokenRequest(w)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 4<<10))
		res, err := link.act(r, svc, token)
		if err != nil {
			return err
		}
		if wantsHTML(r) {
			return writeHTMLPage(w, r, link.done, nil)
		}
		return s.writeValue(w, r, res)
	}
}

func (s *Server) writeValue(w http.ResponseWriter, r *http.Request, v any) error {
	return s.writeStatus(w, r, http.StatusOK, v)
}

// writeStatus writes v as JSON with status.
func (s *Server) writeStatus(w http.ResponseWriter, r *http.Request, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding response: %w", err)
	}
	writeJSON(w, r, status, b)
	return nil
}

// asksJSON reports whether the client asked for JSON and not for HTML:
// some media range of its Accept is application/json or a +json type, and
// none is text/html or application/xhtml+xml (ranges with q=0 refused
// aside). Only such a client changes state with a GET: browsers, mail
// scanners and link checkers send text/html, */* or no Accept.
func asksJSON(r *http.Request) bool {
	json := false
	for _, accept := range r.Header.Values("Accept") {
		for _, rng := range strings.Split(accept, ",") {
			media, params, _ := strings.Cut(rng, ";")
			media = strings.ToLower(strings.TrimSpace(media))
			if refused(params) {
				continue
			}
			switch {
			case media == "text/html" || media == "application/xhtml+xml":
				return false
			case media == "application/json" || strings.HasPrefix(media, "application/") && strings.HasSuffix(media, "+json"):
				json = true
			}
		}
	}
	return json
}

// refused reports whether the parameters of a media range give it q=0.
func refused(params string) bool {
	for _, p := range strings.Split(params, ";") {
		k, v, _ := strings.Cut(p, "=")
		if strings.EqualFold(strings.TrimSpace(k), "q") {
			v = strings.TrimRight(strings.TrimSpace(v), "0")
			return v == "0." || v == "0" || v == ""
		}
	}
	return false
}

// wantsHTML reports whether the client asked for HTML, as a browser does.
func wantsHTML(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}

func writeHTMLPage(w http.ResponseWriter, r *http.Request, t *template.Template, data any) error {
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return fmt.Errorf("rendering page: %w", err)
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; form-action 'self'; style-src 'unsafe-inline'")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b.Bytes())
	}
	return nil
}

const pageHead = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
	`<meta name="robots" content="noindex"><title>Rappel</title></head><body style="font-family:sans-serif;max-width:36em;margin:2em auto">`

var (
	unsubscribeFormPage = template.Must(template.New("form").Parse(pageHead +
		`<h1>Unsubscribe from recall alerts</h1><p>Press the button to stop receiving these e-mail alerts.</p>` +
		`<h1 lang="fr">Se désabonner des alertes de rappel</h1><p lang="fr">Appuyez sur le bouton pour ne plus recevoir ces alertes par courriel.</p>` +
		`<form method="post" action="?token={{.Token}}"><input type="hidden" name="List-Unsubscribe" value="One-Click">` +
		`<button type="submit">Unsubscribe / Se désabonner</button></form></body></html>`))
	unsubscribedPage = template.Must(template.New("done").Parse(pageHead +
		`<h1>You are unsubscribed</h1><p>You will receive no more alerts for this search.</p>` +
		`<h1 lang="fr">Vous êtes désabonné</h1><p lang="fr">Vous ne recevrez plus d'alertes pour cette recherche.</p></body></html>`))
	confirmFormPage = template.Must(template.New("confirm").Parse(pageHead +
		`<h1>Confirm your recall alerts</h1><p>Press the button to receive an e-mail when a new recall matches your search.</p>` +
		`<h1 lang="fr">Confirmer vos alertes de rappel</h1><p lang="fr">Appuyez sur le bouton pour recevoir un courriel lorsqu'un nouveau rappel correspondra à votre recherche.</p>` +
		`<form method="post" action="?token={{.Token}}"><button type="submit">Confirm / Confirmer</button></form></body></html>`))
	confirmedPage = template.Must(template.New("confirmed").Parse(pageHead +
		`<h1>Subscription confirmed</h1><p>You will receive an e-mail when a new recall matches your search.</p>` +
		`<h1 lang="fr">Abonnement confirmé</h1><p lang="fr">Vous recevrez un courriel lorsqu'un nouveau rappel correspondra à votre recherche.</p></body></html>`))
)

// bodyObject reads body as one JSON object, its members unread, or says
// in the body's 422 why it is not one (empty, not JSON, where it breaks),
// with example as the fix. Every JSON body of the API is read with it.
func bodyObject(body []byte, example string) (map[string]json.RawMessage, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil || raw == nil {
		why := rappel.Reason{Problem: "is not a JSON object", Fix: example}
		var se *json.SyntaxError
		if len(bytes.TrimSpace(body)) == 0 {
			why.Problem = "is empty"
		} else if errors.As(err, &se) {
			why.Problem = fmt.Sprintf("is not valid JSON: %s, at byte %d", se.Error(), se.Offset)
		}
		return nil, rappel.Invalids(rappel.InvalidJSON(rappel.BodyLoc(""), why))
	}
	return raw, nil
}
