package index

import "github.com/rappel-ca/rappel"

// WithInfo returns a snapshot of the same records as s that describes the
// dataset as info (its record count stays s's). It shares everything else
// with s, so it costs nothing to build: a refresh that found nothing new
// still moves the dataset's time without rebuilding the index.
func (s *Snapshot) WithInfo(info rappel.DatasetInfo) *Snapshot {
	c := *s
	c.info = info
	c.info.Records = s.n
	return &c
}
