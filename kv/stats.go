package kv

import "github.com/rappel-ca/rappel"

// StorageStats reads Pebble's own figures for /metrics: cheap (a copy of
// counters Pebble keeps), so it runs at each scrape rather than in a
// goroutine of its own. A store not open reads as zero.
func (s *Store) StorageStats() rappel.StorageStats {
	if s.db == nil {
		return rappel.StorageStats{}
	}
	m := s.db.Metrics()
	return rappel.StorageStats{
		DiskBytes:             m.DiskSpaceUsage(),
		Compactions:           uint64(max(m.Compact.Count, 0)),
		CompactionDebtBytes:   m.Compact.EstimatedDebt,
		InProgressCompactions: uint64(max(m.Compact.NumInProgress, 0)),
		Flushes:               uint64(max(m.Flush.Count, 0)),
		WALBytesWritten:       m.WAL.BytesWritten,
		WALFiles:              uint64(max(m.WAL.Files, 0)),
		WALBytes:              m.WAL.PhysicalSize,
		ReadAmplification:     uint64(max(m.ReadAmp(), 0)),
		MemtableBytes:         m.MemTable.Size,
		L0Files:               uint64(max(m.Levels[0].TablesCount, 0)),
	}
}
