package alerts

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"html/template"
	"net/url"
	"regexp"
	"slices"
	"strings"
	texttemplate "text/template"

	mail "github.com/wneessen/go-mail"

	"github.com/rappel-ca/rappel"
)

// mailRecall is one recall of a digest, in one language.
type mailRecall struct {
	Title, Hazard, WhatToDo, URL string
}

// mailPart is a digest in one language.
type mailPart struct {
	Lang        string
	Intro       string
	Recalls     []mailRecall
	Unsubscribe string // the sentence before the link
	Hazard, Do  string // labels
}

type mailData struct {
	Parts          []mailPart
	UnsubscribeURL string
}

// HazardLabel and DoLabel are bilingual labels for the plain text.
func (mailData) HazardLabel() string { return "Hazard / Danger:" }
func (mailData) DoLabel() string     { return "What to do / Que faire:" }

// compose builds the digest e-mail of d for sub: plain text and HTML, in
// the subscription's language or both, with the unsubscribe headers of
// RFC 2369 and RFC 8058 and a Message-ID derived from the outbox keys.
func (s *Sender) compose(sub *rappel.Subscription, d *digest, recs []*rappel.Record, token string) (*mail.Msg, error) {
	base := strings.TrimRight(s.PublicURL, "/")
	unsub := unsubscribeURL(base, token)
	langs := []string{rappel.LangEN, rappel.LangFR}
	if sub.Lang != "" {
		langs = []string{sub.Lang}
	}
	data := mailData{UnsubscribeURL: unsub}
	for _, lang := range langs {
		p := mailPart{Lang: lang}
		if lang == rappel.LangFR {
			p.Intro = fmt.Sprintf("%d nouveau(x) rappel(s) correspondent à votre recherche enregistrée.", len(recs))
			p.Unsubscribe, p.Hazard, p.Do = "Pour ne plus recevoir ces alertes, désabonnez-vous :", "Danger :", "Que faire :"
		} else {
			p.Intro = fmt.Sprintf("%d new recall(s) match your saved search.", len(recs))
			p.Unsubscribe, p.Hazard, p.Do = "To stop these alerts, unsubscribe:", "Hazard:", "What to do:"
		}
		for _, r := range recs {
			mr := mailRecall{Title: r.Title(lang)}
			if tr := r.Translations.Lang(lang); tr != nil {
				mr.Hazard, mr.WhatToDo, mr.URL = tr.HazardDescription, tr.WhatToDo, tr.URL
			}
			if mr.URL == "" {
				mr.URL = base + "/recall/" + url.PathEscape(r.RecordID) + "?lang=" + lang
			}
			p.Recalls = append(p.Recalls, mr)
		}
		data.Parts = append(data.Parts, p)
	}
	var txt, html bytes.Buffer
	if err := plainTmpl.Execute(&txt, data); err != nil {
		return nil, fmt.Errorf("rendering text: %w", err)
	}
	if err := htmlTmpl.Execute(&html, data); err != nil {
		return nil, fmt.Errorf("rendering html: %w", err)
	}
	m := mail.NewMsg()
	if err := m.FromFormat(s.FromName, s.From); err != nil {
		return nil, fmt.Errorf("setting From: %w", err)
	}
	if err := m.To(sub.Email); err != nil {
		return nil, fmt.Errorf("setting To: %w", err)
	}
	subject := fmt.Sprintf("Recall alert: %s", recs[0].Title(rappel.LangEN))
	switch sub.Lang {
	case rappel.LangFR:
		subject = fmt.Sprintf("Alerte de rappel : %s", recs[0].Title(rappel.LangFR))
	case "":
		subject = fmt.Sprintf("Recall alert / Alerte de rappel : %s", recs[0].Title(rappel.LangEN))
	}
	if len(recs) > 1 {
		subject += fmt.Sprintf(" (+%d)", len(recs)-1)
	}
	m.Subject(subject)
	host := mailHost(base)
	m.SetMessageIDWithValue(messageID(sub.ID, d.rows, host))
	m.SetGenHeader(mail.HeaderListUnsubscribe, "<"+unsub+">, <mailto:"+s.From+"?subject=unsubscribe%20"+url.QueryEscape(token)+">")
	m.SetGenHeader(mail.HeaderListUnsubscribePost, "List-Unsubscribe=One-Click")
	m.SetGenHeader("List-Id", "Rappel recall alerts <alerts."+host+">")
	m.SetGenHeader("Auto-Submitted", "auto-generated")
	m.SetBodyString(mail.TypeTextPlain, txt.String())
	m.AddAlternativeString(mail.TypeTextHTML, html.String())
	return m, nil
}

var plainTmpl = texttemplate.Must(texttemplate.New("text").Parse(`{{range .Parts}}{{.Intro}}
{{range .Recalls}}
* {{.Title}}
{{- if .Hazard}}
  {{$.HazardLabel}} {{.Hazard}}{{end}}
{{- if .WhatToDo}}
  {{$.DoLabel}} {{.WhatToDo}}{{end}}
  {{.URL}}
{{end}}
{{.Unsubscribe}} {{$.UnsubscribeURL}}

{{end}}-- 
Rappel
`))

var htmlTmpl = template.Must(template.New("html").Parse(`<!doctype html><html><body style="font-family:sans-serif">
{{range .Parts}}<div lang="{{.Lang}}"><p>{{.Intro}}</p><ul>
{{range .Recalls}}<li><a href="{{.URL}}">{{.Title}}</a>{{if .Hazard}}<br>{{.Hazard}}{{end}}{{if .WhatToDo}}<br>{{.WhatToDo}}{{end}}</li>
{{end}}</ul><p>{{.Unsubscribe}} <a href="{{$.UnsubscribeURL}}">{{$.UnsubscribeURL}}</a></p></div>
{{end}}<p>Rappel</p></body></html>`))

var confirmTmpl = texttemplate.Must(texttemplate.New("confirm").Parse(`Please confirm that you want e-mail alerts when new recalls match your search, by opening this link:
{{.Confirm}}

Veuillez confirmer que vous voulez recevoir des alertes par courriel lorsque de nouveaux rappels correspondent à votre recherche, en ouvrant ce lien :
{{.Confirm}}

If you did not ask for this, ignore this e-mail: nothing will be sent. / Si vous n'avez rien demandé, ignorez ce courriel : rien ne sera envoyé.
-- 
Rappel
`))

// composeConfirmation builds the double opt-in e-mail of a pending
// subscription: a link to GET /recall/alerts/confirm, bilingual whatever
// the subscription's language (the text is short), with a Message-ID
// derived from the subscription, so that the same e-mail sent again after
// a crash is recognisably the same message. It returns the e-mail's links
// for the mail dir's log, as deliver takes them.
func (s *Sender) composeConfirmation(sub *rappel.Subscription, confirmToken, unsubscribeToken string) (*mail.Msg, []string, error) {
	base := strings.TrimRight(s.PublicURL, "/")
	var txt bytes.Buffer
	link := base + "/recall/alerts/confirm?token=" + url.QueryEscape(confirmToken)
	if err := confirmTmpl.Execute(&txt, map[string]string{"Confirm": link}); err != nil {
		return nil, nil, fmt.Errorf("rendering confirmation: %w", err)
	}
	m := mail.NewMsg()
	if err := m.FromFormat(s.FromName, s.From); err != nil {
		return nil, nil, fmt.Errorf("setting From: %w", err)
	}
	if err := m.To(sub.Email); err != nil {
		return nil, nil, fmt.Errorf("setting To: %w", err)
	}
	m.Subject("Confirm your recall alerts / Confirmez vos alertes de rappel")
	unsub := unsubscribeURL(base, unsubscribeToken)
	m.SetMessageIDWithValue("confirm." + sub.ID + "@" + mailHost(base))
	m.SetGenHeader(mail.HeaderListUnsubscribe, "<"+unsub+">")
	m.SetGenHeader(mail.HeaderListUnsubscribePost, "List-Unsubscribe=One-Click")
	m.SetGenHeader("Auto-Submitted", "auto-generated")
	m.SetBodyString(mail.TypeTextPlain, txt.String())
	return m, []string{"confirm", link, "unsubscribe", unsub}, nil
}

// mailHost is the host of the public URL base, the right part of the
// Message-IDs.
func mailHost(base string) string {
	if u, err := url.Parse(base); err == nil && u.Hostname() != "" {
		return u.Hostname()
	}
	return "rappel.invalid"
}

// unsubscribeURL is the one-click unsubscribe link of token under the
// public URL base.
func unsubscribeURL(base, token string) string {
	return strings.TrimRight(base, "/") + "/recall/alerts/unsubscribe?token=" + url.QueryEscape(token)
}

// messageID derives a digest's Message-ID from its outbox keys, the
// subscription and its recalls' record ids, so that the same digest sent
// again after a crash, by this node or by the one that recovered its
// claim, is recognisably the same message (receivers may drop the copy),
// while two digests never share one. Batch numbers are not used: each node
// numbers its own.
func messageID(sub string, rows []*rappel.AlertRow, host string) string {
	if len(rows) == 1 {
		if r := rows[0].Record; recordIDPattern.MatchString(r) {
			return fmt.Sprintf("alert.%s.%s@%s", sub, r, host)
		}
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.Record
	}
	slices.Sort(ids)
	h := sha256.Sum256([]byte(strings.Join(ids, "\n")))
	return fmt.Sprintf("alert.%s.%x@%s", sub, h[:12], host)
}

// recordIDPattern is the record ids that may stand as they are in the left
// part of a Message-ID (RFC 5322 dot-atom text).
var recordIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)
