package edge

import (
	"net/http"
	"time"

	"github.com/rappel-ca/rappel"
)

// adminBackupTimeout bounds how long POST /admin/backup may stream: a data
// dir of a few hundred MiB takes seconds over a LAN, so an hour is for
// slow links only, and still ends a client that stopped reading.
const adminBackupTimeout = time.Hour

// adminBackup answers POST /admin/backup: a tar archive of the node's data
// dir as of the request (docs/operations.md, "Backup and restore"), streamed as it is
// written. An archive that fails once started is cut (the connection
// closes without the body's end) so that the client never takes it for a
// whole one; its own manifest, last, is what a restore checks.
func (s *Server) adminBackup(w http.ResponseWriter, r *http.Request) error {
	if err := s.authenticateAdmin(r); err != nil {
		return err
	}
	if err := paramsOf(w).err(); err != nil {
		return err
	}
	if s.Backup == nil {
		return rappel.Errorf(rappel.EUNAVAILABLE, "This node takes no backups.")
	}
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(adminBackupTimeout)) // the connection's clock, not s.Now
	h := w.Header()
	h.Set("Content-Type", "application/x-tar")
	h.Set("Content-Disposition", `attachment; filename="rappel-backup.tar"`)
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if err := s.Backup(r.Context(), w); err != nil {
		x := exchangeOf(w)
		if !x.gone && r.Context().Err() == nil {
			s.Logger.ErrorContext(r.Context(), "writing a backup", "error", err, "request_id", x.id)
			x.cut = cutServerError
		}
	}
	return nil
}
