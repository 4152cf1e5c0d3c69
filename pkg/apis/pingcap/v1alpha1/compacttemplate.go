package v1alpha1

import (
	"encoding/json"
	"fmt"
)

// DefaultCompactConcurrency and DefaultCompactMaxRetryTimes are the
// CompactBackup CRD's defaults, which a BackupSchedule's compaction template
// gets for the fields it leaves out (the API server defaults only absent
// fields, and the created CompactBackup carries them explicitly).
const (
	DefaultCompactConcurrency   = 4
	DefaultCompactMaxRetryTimes = 6
)

// CompactTemplate decodes s.compactBackupTemplate into a CompactSpec, with
// the CRD's defaults for concurrency and maxRetryTimes when the template
// leaves them out. Fields CompactSpec does not have are ignored, as the
// TiDB Operator ignores them. It returns nil, nil without a template, and
// an error when the template is not a JSON object of CompactSpec's shape.
func (s *BackupScheduleSpec) CompactTemplate() (*CompactSpec, error) {
	if s.CompactBackupTemplate == nil {
		return nil, nil
	}
	spec := &CompactSpec{Concurrency: DefaultCompactConcurrency, MaxRetryTimes: DefaultCompactMaxRetryTimes}
	raw := s.CompactBackupTemplate.Raw
	if len(raw) == 0 {
		return spec, nil
	}
	if err := json.Unmarshal(raw, spec); err != nil {
		return nil, fmt.Errorf("decode compactBackupTemplate: %w", err)
	}
	return spec, nil
}
