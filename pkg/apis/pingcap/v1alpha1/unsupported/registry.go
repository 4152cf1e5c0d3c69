// Package unsupported is the one registry of the fields the served kinds
// accept and this operator version does not act on. Each kind's controller
// names the entries an object sets in its Unsupported condition and a
// Warning event; hack/fieldcheck reads the code and fails for a field that
// no product code reads and no entry here covers, so the condition and the
// code cannot drift.
package unsupported

import (
	"slices"
	"strings"
)

// Field is one accepted field nothing acts on.
type Field[T any] struct {
	// Path is the field's JSON path from the object as hack/fieldcheck
	// walks it: lists and maps add no index (spec.pdms.replicas). Every
	// field below Path is covered too.
	Path string
	// Why, when set, says what happens instead; the message adds it in
	// parentheses after the path.
	Why string
	// Set reports whether obj sets the field.
	Set func(obj *T) bool
	// Example sets the field on obj, for the test that sees every entry
	// named once its field is set.
	Example func(obj *T)
	// Partial is set when the field is acted on except in the combination
	// Set detects (spec.pdms without spec.pd.mode "ms"): the entry names it
	// then, and covers no path for hack/fieldcheck, whose reads find it.
	Partial bool
}

// Name is how messages name f: its path and, when set, why.
func (f Field[T]) Name() string {
	if f.Why == "" {
		return f.Path
	}
	return f.Path + " (" + f.Why + ")"
}

// Fields returns the Name of each entry of reg that obj sets, sorted.
func Fields[T any](reg []Field[T], obj *T) []string {
	var out []string
	for _, f := range reg {
		if f.Set(obj) {
			out = append(out, f.Name())
		}
	}
	slices.Sort(out)
	return out
}

// Paths returns the paths of reg.
func Paths[T any](reg []Field[T]) []string {
	out := make([]string, 0, len(reg))
	for _, f := range reg {
		if !f.Partial {
			out = append(out, f.Path)
		}
	}
	return out
}

// Covers reports whether path is one of paths or below one.
func Covers(paths []string, path string) bool {
	for _, p := range paths {
		if path == p || strings.HasPrefix(path, p+".") {
			return true
		}
	}
	return false
}

// ByKind returns the paths of every kind's registry, keyed by kind.
func ByKind() map[string][]string {
	return map[string][]string{
		"TidbCluster":      Paths(TidbCluster),
		"TidbMonitor":      Paths(TidbMonitor),
		"TidbInitializer":  Paths(TidbInitializer),
		"TidbDashboard":    Paths(TidbDashboard),
		"TidbNGMonitoring": Paths(TidbNGMonitoring),
		"Backup":           Paths(Backup),
		"Restore":          Paths(Restore),
		"BackupSchedule":   Paths(BackupSchedule),
		"CompactBackup":    Paths(CompactBackup),
		"DMCluster":        Paths(DMCluster),
	}
}

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }
