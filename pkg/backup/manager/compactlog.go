package manager

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The messages of tikv-ctl compact-log-backup's JSON log the backup-manager
// acts on (v1.6's contract).
const (
	msgSpawn   = "Spawning compaction."
	msgFinish  = "Finishing compaction."
	msgAborted = "Compaction aborted."
)

// compactProgress is what a "Finishing compaction." object reports.
type compactProgress struct {
	MetaCompleted  uint64 `json:"meta_completed"`
	MetaTotal      uint64 `json:"meta_total"`
	BytesToCompact uint64 `json:"bytes_to_compact"`
	BytesCompacted uint64 `json:"bytes_compacted"`
}

// String is v1.6's progress format:
// [READ_META(<done>/<total>),COMPACT_WORK(<compacted>/<to compact>)].
func (p compactProgress) String() string {
	return fmt.Sprintf("[READ_META(%d/%d),COMPACT_WORK(%d/%d)]", p.MetaCompleted, p.MetaTotal, p.BytesCompacted, p.BytesToCompact)
}

// compactEvent is one JSON object of tikv-ctl's log, read.
type compactEvent struct {
	// maxTs is the input_max_ts of a spawn (0 for others).
	maxTs uint64
	// progress is set for a finish.
	progress *compactProgress
	// aborted is the err of an abort ("" for others).
	aborted string
}

// parseCompactLine reads one line of tikv-ctl's stderr: a JSON object whose
// message (key "message", any case) may be one of the above. Blank lines
// give a zero event; a line that is no JSON object is an error ("failed to
// decode raw log line"), as v1.6 treats it.
func parseCompactLine(line []byte) (compactEvent, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return compactEvent{}, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		return compactEvent{}, fmt.Errorf("failed to decode raw log line %q: %w", line, err)
	}
	var ev compactEvent
	switch messageOf(fields) {
	case msgSpawn:
		ev.maxTs = uintField(fields["input_max_ts"])
	case msgFinish:
		p := compactProgress{}
		if err := json.Unmarshal(line, &p); err != nil {
			return compactEvent{}, fmt.Errorf("failed to decode the progress of %q: %w", line, err)
		}
		ev.progress = &p
	case msgAborted:
		var e string
		if err := json.Unmarshal(fields["err"], &e); err != nil || e == "" {
			e = strings.Trim(string(fields["err"]), `"`)
		}
		if e == "" {
			e = "unknown error"
		}
		ev.aborted = e
	}
	return ev, nil
}

// messageOf is the object's message, whatever the key's case.
func messageOf(fields map[string]json.RawMessage) string {
	for k, v := range fields {
		if strings.EqualFold(k, "message") {
			var s string
			if json.Unmarshal(v, &s) == nil {
				return s
			}
		}
	}
	return ""
}

// uintField reads a number or a decimal string; 0 when it is neither.
func uintField(raw json.RawMessage) uint64 {
	s := strings.Trim(string(raw), `"`)
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0
	}
	return n
}
