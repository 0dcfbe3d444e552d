package edge

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rappel-ca/rappel"
)

// adminBackupTimeout bounds how long POST /admin/backup may stream: a data
// dir of a few hundred MiB takes seconds over a LAN, so an hour is for
// slow links only, and still ends a client that stopped reading.
const adminBackupTimeout = time.Hour

// Backups takes the node's backups for POST /admin/backup (cmd/rappel's
// backup.go) and keeps the last one that succeeded across restarts, so
// that rappel_backup_last_success_timestamp_seconds says when the node's
// data was last saved, not when it last restarted.
type Backups interface {
	// Start takes what the archive holds as of now: the checkpoints of
	// the store and of the key database. Its error fails the backup
	// before a byte of the archive is sent; a *rappel.Error's sentence
	// is what the client is answered and the log's reason.
	Start(ctx context.Context) (BackupArchive, error)
	// Last returns the last successful backup as kept, zero when there
	// was none; the Server reads it once, when its backup figures are
	// first needed.
	Last() (BackupResult, error)
	// Keep records res as the last successful backup, for the next start.
	Keep(res BackupResult) error
}

// BackupArchive is a backup that Start took.
type BackupArchive interface {
	// Write streams the archive to w and returns the number of files it
	// holds.
	Write(ctx context.Context, w io.Writer) (files int, err error)
	// Close removes what Start took, however Write ended.
	Close() error
}

// BackupResult is a backup that succeeded: when it ended, how long it
// took from the request, the files the archive holds and its size.
type BackupResult struct {
	EndedAt  time.Time
	Duration time.Duration
	Files    int
	Bytes    int64
}

// backupState is what /metrics says of the backups: the last success
// (read from Backups.Last on first use) and the failures since start.
type backupState struct {
	once     sync.Once
	mu       sync.Mutex
	last     BackupResult
	failures uint64
}

// backupFigures returns the last successful backup and the failures
// since start, reading the kept one on first use.
func (s *Server) backupFigures() (BackupResult, uint64) {
	b := &s.backupState
	b.once.Do(func() {
		if s.Backups == nil {
			return
		}
		last, err := s.Backups.Last()
		if err != nil {
			s.Logger.Warn("reading the last backup's record; the backup metrics start from none", "error", err)
			return
		}
		b.mu.Lock()
		if b.last.EndedAt.IsZero() {
			b.last = last
		}
		b.mu.Unlock()
	})
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.last, b.failures
}

// adminBackup answers POST /admin/backup: a tar archive of the node's data
// dir as of the request (docs/operations.md, "Backup and restore"),
// streamed as it is written. The checkpoints are taken before the answer
// starts, so that one that fails (a full disk) is answered with a status
// and a sentence, at once. An archive that fails once started is cut (the
// connection closes without the body's end) so that the client never
// takes it for a whole one; its own manifest, last, is what a restore
// checks. Each backup's start and end are logged and counted (/metrics);
// the node's health never depends on them.
func (s *Server) adminBackup(w http.ResponseWriter, r *http.Request) error {
	if err := s.authenticateAdmin(r); err != nil {
		return err
	}
	if err := paramsOf(w).err(); err != nil {
		return err
	}
	if s.Backups == nil {
		return rappel.Errorf(rappel.EUNAVAILABLE, "This node takes no backups.")
	}
	ctx, x := r.Context(), exchangeOf(w)
	s.backupFigures() // the kept record is read before this backup can replace it
	start := s.Now()
	client, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		client = r.RemoteAddr
	}
	// The admin key has no label: the line names the kind of key and the
	// client's address, never the key.
	s.Logger.InfoContext(ctx, "backup started", "by", "admin key", "client", client, "request_id", x.id)
	a, err := s.Backups.Start(ctx)
	if err != nil {
		if ctx.Err() != nil {
			s.backupFailed(ctx, x, start, slog.LevelWarn, "The client closed the connection before the checkpoints were taken.", err)
		} else {
			s.backupFailed(ctx, x, start, slog.LevelError, rappel.ErrorMessage(err), err)
		}
		return err
	}
	defer func() {
		if err := a.Close(); err != nil {
			s.Logger.WarnContext(ctx, "removing a backup's checkpoints; delete the data dir's .backup-* directory by hand", "error", err, "request_id", x.id)
		}
	}()
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(adminBackupTimeout)) // the connection's clock, not s.Now
	h := w.Header()
	h.Set("Content-Type", "application/x-tar")
	h.Set("Content-Disposition", `attachment; filename="rappel-backup.tar"`)
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	cw := &countingWriter{w: w}
	files, err := a.Write(ctx, cw)
	switch {
	case err == nil:
		end := s.Now()
		s.backupSucceeded(ctx, x, BackupResult{EndedAt: end, Duration: end.Sub(start), Files: files, Bytes: cw.n})
	case s.stopping.Load():
		s.backupFailed(ctx, x, start, slog.LevelWarn, "The node shut down before the archive was whole.", err)
	case x.gone || ctx.Err() != nil:
		s.backupFailed(ctx, x, start, slog.LevelWarn, "The client closed the connection before the archive was whole.", err)
	default:
		x.cut = cutServerError
		s.backupFailed(ctx, x, start, slog.LevelError, "Writing the archive failed after it had started, so its stream was cut; rappel backup refuses a cut archive.", err)
	}
	return nil
}

// backupSucceeded logs and counts a backup that succeeded, and keeps it as
// the last one.
func (s *Server) backupSucceeded(ctx context.Context, x *exchange, res BackupResult) {
	b := &s.backupState
	b.mu.Lock()
	b.last = res
	b.mu.Unlock()
	s.Logger.InfoContext(ctx, "backup finished", "files", res.Files, "bytes", res.Bytes, "duration", res.Duration, "request_id", x.id)
	if err := s.Backups.Keep(res); err != nil {
		s.Logger.WarnContext(ctx, "the backup succeeded, but its record was not kept: after a restart the node's metrics will show the one before", "error", err, "request_id", x.id)
	}
}

// backupFailed logs at level and counts a backup that failed for reason,
// a sentence; err is the cause, for the log only. A failure the node did
// not cause (the client gone, the shutdown) is a warning.
func (s *Server) backupFailed(ctx context.Context, x *exchange, start time.Time, level slog.Level, reason string, err error) {
	b := &s.backupState
	b.mu.Lock()
	b.failures++
	b.mu.Unlock()
	var e *rappel.Error
	if errors.As(err, &e) && e.Err != nil {
		err = e.Err // the reason is e's sentence already
	}
	s.Logger.Log(ctx, level, "backup failed", "reason", reason, "error", err, "duration", s.Now().Sub(start), "request_id", x.id)
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// backupCollector reports the backups: every series from the start, the
// last success's at zero until there is one.
type backupCollector struct{ s *Server }

var (
	backupLastSuccessDesc = prometheus.NewDesc("rappel_backup_last_success_timestamp_seconds",
		"When the last successful backup (POST /admin/backup, rappel backup) ended, as Unix time, kept across restarts; 0 while the data dir never had one.", nil, nil)
	backupDurationDesc = prometheus.NewDesc("rappel_backup_duration_seconds",
		"How long the last successful backup took, from the request to the archive's end; 0 while there was none.", nil, nil)
	backupBytesDesc = prometheus.NewDesc("rappel_backup_bytes",
		"Size of the last successful backup's archive in bytes; 0 while there was none.", nil, nil)
	backupFailuresDesc = prometheus.NewDesc("rappel_backup_failures_total",
		"Backups that failed since the node started: a checkpoint that could not be written, an archive cut by an error, the client or the shutdown.", nil, nil)
)

func (c *backupCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{backupLastSuccessDesc, backupDurationDesc, backupBytesDesc, backupFailuresDesc} {
		ch <- d
	}
}

func (c *backupCollector) Collect(ch chan<- prometheus.Metric) {
	if c.s.Backups == nil {
		return
	}
	last, failures := c.s.backupFigures()
	var at float64
	if !last.EndedAt.IsZero() {
		at = unixSeconds(last.EndedAt)
	}
	constMetric(ch, backupLastSuccessDesc, prometheus.GaugeValue, at)
	constMetric(ch, backupDurationDesc, prometheus.GaugeValue, last.Duration.Seconds())
	constMetric(ch, backupBytesDesc, prometheus.GaugeValue, float64(last.Bytes))
	constMetric(ch, backupFailuresDesc, prometheus.CounterValue, failures)
}
