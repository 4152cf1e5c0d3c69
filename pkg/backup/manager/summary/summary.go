// Package summary reads what BR prints when it ends: the summary log line
// `["Full Backup success summary"] [total-ranges=…] … [BackupTS=…]
// [total-kv=…] [total-kv-size=…] [Size=…]` (a raw backup spells the TSO
// `backup-ts`), or its `failed summary` twin.
package summary

import (
	"strconv"
	"strings"
)

// Summary is what one BR summary line says.
type Summary struct {
	// Title is the quoted message, e.g. "Full Backup success summary".
	Title string
	// Succeeded is true for a success summary, false for a failed one.
	Succeeded bool
	// Fields are the line's [key=value] fields after the title.
	Fields map[string]string
}

// CommitTs is the backup's TSO (BackupTS, or backup-ts for raw backups);
// empty when the line has none.
func (s Summary) CommitTs() string {
	for _, k := range []string{"BackupTS", "backup-ts", "backupts"} {
		if v := s.Fields[k]; v != "" {
			if _, err := strconv.ParseUint(v, 10, 64); err == nil {
				return v
			}
		}
	}
	return ""
}

// TotalKV is total-kv, and whether it was there and a number.
func (s Summary) TotalKV() (uint64, bool) {
	v, err := strconv.ParseUint(s.Fields["total-kv"], 10, 64)
	return v, err == nil
}

// TotalKVSize is total-kv-size as BR prints it (e.g. "108.7MB").
func (s Summary) TotalKVSize() string { return s.Fields["total-kv-size"] }

// DataSize is the stored size in bytes BR reports (Size), and whether it was
// there and a number.
func (s Summary) DataSize() (int64, bool) {
	v, err := strconv.ParseInt(s.Fields["Size"], 10, 64)
	return v, err == nil && v >= 0
}

// Parse reads one line of BR's output; ok is false unless it is a summary
// line: a bracketed, quoted title ending in "success summary" or
// "failed summary" (any case), followed by [key=value] fields. Fields that
// are not key=value are skipped; a malformed line is no summary.
func Parse(line string) (Summary, bool) {
	fields := bracketed(line)
	for i, f := range fields {
		title, ok := quoted(f)
		if !ok {
			continue
		}
		lower := strings.ToLower(title)
		success := strings.HasSuffix(lower, "success summary")
		if !success && !strings.HasSuffix(lower, "failed summary") {
			continue
		}
		s := Summary{Title: title, Succeeded: success, Fields: map[string]string{}}
		for _, kv := range fields[i+1:] {
			if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
				s.Fields[k] = strings.Trim(v, `"`)
			}
		}
		return s, true
	}
	return Summary{}, false
}

// bracketed splits line into its top-level [..] groups, honouring quotes
// (a quoted value may hold brackets). An unclosed group ends the list.
func bracketed(line string) []string {
	var out []string
	depth, start, inQuote := 0, 0, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\\' && inQuote:
			i++
		case c == '"' && depth > 0:
			inQuote = !inQuote
		case inQuote:
		case c == '[':
			if depth == 0 {
				start = i + 1
			}
			depth++
		case c == ']' && depth > 0:
			depth--
			if depth == 0 {
				out = append(out, line[start:i])
			}
		}
	}
	return out
}

// quoted returns the content of a field that is one quoted string.
func quoted(f string) (string, bool) {
	if len(f) < 2 || f[0] != '"' || f[len(f)-1] != '"' {
		return "", false
	}
	s, err := strconv.Unquote(f)
	if err != nil {
		return f[1 : len(f)-1], true
	}
	return s, true
}

// Last is the last summary among lines, and whether there was one.
func Last(lines []string) (Summary, bool) {
	for i := len(lines) - 1; i >= 0; i-- {
		if s, ok := Parse(lines[i]); ok {
			return s, true
		}
	}
	return Summary{}, false
}
