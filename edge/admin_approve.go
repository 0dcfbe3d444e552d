package edge

import (
	"context"
	"net/http"
	"regexp"
	"strings"

	"github.com/rappel-ca/rappel"
)

// maxApproveBody bounds the body of POST /admin/plugins/{source}/approve:
// one digest.
const maxApproveBody = 1 << 10

const approveExample = `send a JSON object such as '{"sha256": "<the 64 hex digits GET /admin/plugins shows>"}'`

var (
	sourceName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)
	sha256Hex  = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// ApprovePlugin activates the candidate plugin of source held for
// approval whose SHA-256 is sha (plugins.Registry.Approve), or says in a
// sentence why not.
type ApprovePlugin func(ctx context.Context, source, sha string) error

// adminApprovePlugin answers POST /admin/plugins/{source}/approve: it
// activates the candidate held for approval (its content changed more
// than --plugin-max-change allows) whose digest the body names, and
// answers with the plugins' report. A digest no held candidate has is a
// 422 saying which one is held, if any (docs/feeds.md, "Live feeds").
func (s *Server) adminApprovePlugin(w http.ResponseWriter, r *http.Request) error {
	if err := s.authenticateAdmin(r); err != nil {
		return err
	}
	if err := paramsOf(w).err(); err != nil {
		return err
	}
	source := r.PathValue("source")
	if !sourceName.MatchString(source) {
		return rappel.Invalids(rappel.InvalidValue(rappel.PathLoc("source"), source,
			rappel.Reason{Problem: "is not a source name", Fix: "use a source of GET /admin/plugins, such as hcdump"}))
	}
	sha, err := decodeApprove(r)
	if err != nil {
		return err
	}
	if s.ApprovePlugin == nil || s.Plugins == nil {
		return rappel.Errorf(rappel.EUNAVAILABLE, "The live feeds are off on this node (--feeds off), so it runs no plugins.")
	}
	if err := s.ApprovePlugin(r.Context(), source, sha); err != nil {
		// The registry's sentence says whether no such candidate is held
		// or the approved one failed its trial again.
		return rappel.Invalids(rappel.InvalidValue(rappel.BodyLoc("sha256"), sha,
			rappel.Reason{Problem: "was not activated: " + strings.TrimRight(err.Error(), ". "), Fix: "send the sha256 of a candidate GET /admin/plugins lists as held with reason awaiting_approval"}))
	}
	return s.writeStatus(w, r, http.StatusOK, s.Plugins())
}

// decodeApprove reads the approval's body: {"sha256": "<64 hex digits>"}.
func decodeApprove(r *http.Request) (string, error) {
	var sha *string
	items, err := decodeFields(r, maxApproveBody, approveExample, []string{"sha256"}, map[string]any{"sha256": &sha})
	switch {
	case err != nil:
		return "", err
	case len(items) > 0:
		return "", rappel.Invalids(items...)
	case sha == nil:
		return "", rappel.Invalids(rappel.InvalidMissing(rappel.BodyLoc("sha256"), approveExample))
	case !sha256Hex.MatchString(*sha):
		return "", rappel.Invalids(rappel.InvalidValue(rappel.BodyLoc("sha256"), *sha,
			rappel.Reason{Problem: "is not a SHA-256 digest", Fix: "send its 64 lower-case hex digits, as GET /admin/plugins shows them"}))
	}
	return *sha, nil
}
