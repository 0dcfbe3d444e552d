package alerts

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"

	mail "github.com/wneessen/go-mail"
)

// mailFileError is a message the mail dir could not take. It is temporary
// (see isTemporary): the digest is retried with backoff, as after an SMTP
// server's 4xx.
type mailFileError struct{ err error }

func (e *mailFileError) Error() string { return "writing e-mail into the mail dir: " + e.err.Error() }
func (e *mailFileError) Unwrap() error { return e.err }

// mailFileTime is the time part of a mail file's name: UTC with fixed
// width, so that names sort in the order the files were written.
const mailFileTime = "20060102T150405.000000000Z"

// writeMailFile writes msg whole (RFC 5322, CRLF line ends, as the SMTP
// server would receive it in DATA) into MailDir, created if missing, as
// <time>-<random>.eml, and logs the file with links at info level, so that
// subscribing, confirming and alerts can be followed on one machine
// without an SMTP server. The file appears whole or not at all: it is
// written under a hidden temporary name, synced, then renamed, so a reader
// watching the directory never sees half a message. Files are readable by
// their owner only: they hold addresses and working tokens.
func (s *Sender) writeMailFile(msg *mail.Msg, links []string) error {
	if err := os.MkdirAll(s.MailDir, 0o700); err != nil {
		return &mailFileError{err}
	}
	// The suffix is not read from s.Random, the tokens' source: a file
	// name must not change the tokens a run hands out.
	var suffix [8]byte
	_, _ = rand.Read(suffix[:]) // never fails (crypto/rand)
	name := s.Now().UTC().Format(mailFileTime) + "-" + hex.EncodeToString(suffix[:]) + ".eml"
	f, err := os.CreateTemp(s.MailDir, ".writing-*.eml.tmp")
	if err != nil {
		return &mailFileError{err}
	}
	tmp := f.Name()
	_, err = msg.WriteTo(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(s.MailDir, name))
	}
	if err != nil {
		_ = os.Remove(tmp)
		return &mailFileError{err}
	}
	attrs := []any{"file", filepath.Join(s.MailDir, name), "subject", strings.Join(msg.GetGenHeader(mail.HeaderSubject), " ")}
	for i := 0; i+1 < len(links); i += 2 {
		attrs = append(attrs, links[i], links[i+1])
	}
	s.Logger.Info("e-mail written to the mail dir", attrs...)
	return nil
}
