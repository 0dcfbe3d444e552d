package alerts

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// SecretPrefix starts every webhook signing secret, as Standard Webhooks
// writes them: the rest is the base64 of the key's bytes.
const SecretPrefix = "whsec_"

// secretBytes is the length of a new signing key: 256 bits, HMAC-SHA256's
// block-size worth of entropy and more.
const secretBytes = 32

// NewWebhookSecret returns a new signing secret read from r.
func NewWebhookSecret(r io.Reader) (string, error) {
	var b [secretBytes]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return "", fmt.Errorf("reading random secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b[:]), nil
}

// secretKey decodes a whsec_ secret into the HMAC key.
func secretKey(secret string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil || len(b) == 0 {
		return nil, errors.New("the webhook secret is not whsec_ and base64")
	}
	return b, nil
}

// SignWebhook returns the webhook-signature header of a delivery:
// "v1," and the base64 of HMAC-SHA256(key, id "." timestamp "." body),
// as Standard Webhooks defines it.
func SignWebhook(secret, id string, timestamp int64, body []byte) (string, error) {
	key, err := secretKey(secret)
	if err != nil {
		return "", err
	}
	return "v1," + base64.StdEncoding.EncodeToString(signature(key, id, timestamp, body)), nil
}

func signature(key []byte, id string, timestamp int64, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write(strconv.AppendInt(nil, timestamp, 10))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// VerifyWebhook checks a delivery as a receiver does: one of the
// space-separated v1 signatures of the webhook-signature header matches,
// and webhook-timestamp is within tolerance of now (replays of old
// deliveries fail). It is what the receiver snippet of docs/api.md does.
func VerifyWebhook(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	key, err := secretKey(secret)
	if err != nil {
		return err
	}
	id, ts := h.Get("webhook-id"), h.Get("webhook-timestamp")
	t, err := strconv.ParseInt(ts, 10, 64)
	if id == "" || err != nil {
		return errors.New("webhook-id or webhook-timestamp missing")
	}
	if d := now.Sub(time.Unix(t, 0)); d > tolerance || d < -tolerance {
		return errors.New("webhook-timestamp too far from now")
	}
	want := signature(key, id, t, body)
	for _, sig := range strings.Fields(h.Get("webhook-signature")) {
		v, b64, ok := strings.Cut(sig, ",")
		if !ok || v != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(b64)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return errors.New("no webhook-signature matches")
}
