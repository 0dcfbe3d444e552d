package edge

import (
	"net/http"
	"slices"

	"github.com/rappel-ca/rappel"
)

// webhookFields are the body fields of POST /recall/webhooks.
// The filters are every filter under its Param name.
var webhookFields = slices.Concat([]string{"url", "q"}, bodyFilters(false), []string{"events"})

// maxWebhookBody bounds the body of POST /recall/webhooks: a URL of up to
// 2 KiB and short filters.
const maxWebhookBody = 16 << 10

// maxTestBody is what the fingerprint of an Idempotency-Key reads of the
// body of POST /recall/webhooks/{id}/test, which takes none.
const maxTestBody = 1 << 10

const webhookExample = `send a JSON object such as '{"url": "https://hooks.example.ca/rappel", "q": "listeria", "events": ["recall.created"]}'`

// webhooks returns the webhook service and the caller's key ID, or a 503
// when the node has no webhooks.
func (s *Server) webhooks(w http.ResponseWriter) (rappel.Webhooks, string, error) {
	if err := paramsOf(w).err(); err != nil {
		return nil, "", err
	}
	if s.Webhooks == nil {
		return nil, "", rappel.Errorf(rappel.EUNAVAILABLE, "Webhooks are not enabled on this server.")
	}
	key, err := callerKey(w)
	return s.Webhooks, key, err
}

// callerKey returns the ID of the caller's API key, or the 403 of a
// request without one: what a key owns (endpoints, watchlists) is reached
// with it alone.
func callerKey(w http.ResponseWriter) (string, error) {
	x := exchangeOf(w)
	if x == nil || x.key == nil {
		return "", rappel.Errorf(rappel.EFORBIDDEN, "Missing API key: send it in the x-gateway-key header.")
	}
	return x.key.ID, nil
}

// decodeWebhook reads the body of POST /recall/webhooks; the values are
// checked by WebhookRequest.Validate. A body whose fields the decoder
// refuses (unknown, of the wrong type, not text) is answered with those
// problems and the ones Validate finds in the other fields, in one 422,
// as a subscription's is (docs/api.md, "Webhooks"); the address rules that
// depend on the server's settings are checked once the body decodes.
func decodeWebhook(r *http.Request) (*rappel.WebhookRequest, error) {
	req := &rappel.WebhookRequest{}
	items, err := decodeFields(r, maxWebhookBody, webhookExample, webhookFields, filterTargets(map[string]any{"url": &req.URL, "q": &req.Q,
		"events": &req.Events}, &req.Filters, false))
	if err != nil {
		return nil, err
	}
	if len(items) > 0 {
		_, _, _, verr := req.Validate(r.Context(), domainNames, true)
		return nil, invalidTogether(items, verr)
	}
	return req, nil
}

// createWebhook answers POST /recall/webhooks with 201 and the endpoint,
// its secret shown this once.
func (s *Server) createWebhook(w http.ResponseWriter, r *http.Request) error {
	svc, key, err := s.webhooks(w)
	if err != nil {
		return err
	}
	req, err := decodeWebhook(r)
	if err != nil {
		return err
	}
	req.Served = s.Catalog.Snapshot()
	created, err := svc.Create(r.Context(), key, req)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/recall/webhooks/"+created.ID)
	return s.writeStatus(w, r, http.StatusCreated, created)
}

// webhookList is the body of GET /recall/webhooks.
type webhookList struct {
	Webhooks []*rappel.WebhookView `json:"webhooks"`
}

// listWebhooks answers GET /recall/webhooks with the key's endpoints.
func (s *Server) listWebhooks(w http.ResponseWriter, r *http.Request) error {
	svc, key, err := s.webhooks(w)
	if err != nil {
		return err
	}
	list, err := svc.List(r.Context(), key)
	if err != nil {
		return err
	}
	if list == nil {
		list = []*rappel.WebhookView{}
	}
	return s.writeValue(w, r, webhookList{Webhooks: list})
}

// getWebhook answers GET /recall/webhooks/{id}.
func (s *Server) getWebhook(w http.ResponseWriter, r *http.Request) error {
	svc, key, err := s.webhooks(w)
	if err != nil {
		return err
	}
	v, err := svc.Get(r.Context(), key, r.PathValue("id"))
	if err != nil {
		return err
	}
	return s.writeValue(w, r, v)
}

// deleteWebhook answers DELETE /recall/webhooks/{id} with 204.
func (s *Server) deleteWebhook(w http.ResponseWriter, r *http.Request) error {
	svc, key, err := s.webhooks(w)
	if err != nil {
		return err
	}
	if err := svc.Delete(r.Context(), key, r.PathValue("id")); err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// testWebhook answers POST /recall/webhooks/{id}/test with 202 and the
// webhook.test event it queued, pending; the endpoint's last_test shows
// the outcome from the event's ready_at on (docs/api.md, "Which addresses
// rappel posts to": the answer and its timing are the same whatever the
// receiver does).
func (s *Server) testWebhook(w http.ResponseWriter, r *http.Request) error {
	svc, key, err := s.webhooks(w)
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	t, err := svc.Test(r.Context(), key, id)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/recall/webhooks/"+id)
	w.Header().Set("Cache-Control", "no-store")
	return s.writeStatus(w, r, http.StatusAccepted, t)
}
