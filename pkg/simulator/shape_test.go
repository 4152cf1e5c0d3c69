package simulator

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
)

// assertSameShape fails unless got has, at every level, exactly the object keys of sample with the same
// JSON kinds; every array element of got must have the shape of one of the elements of sample's array (so a
// sample can show the variants omitempty produces). Samples are literal responses of a real PD, so this
// pins field names, omitempty and the string encodings.
func assertSameShape(t *testing.T, sample, got string) {
	t.Helper()
	var want, have any
	if err := json.Unmarshal([]byte(sample), &want); err != nil {
		t.Fatalf("bad sample: %v", err)
	}
	if err := json.Unmarshal([]byte(got), &have); err != nil {
		t.Fatalf("response is not JSON: %v\n%s", err, got)
	}
	if diffs := shapeDiff("$", want, have); len(diffs) > 0 {
		t.Errorf("response shape differs from the real PD sample:\n  %s\nresponse: %s", strings.Join(diffs, "\n  "), got)
	}
}

func kind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	}
	return "null"
}

func shapeDiff(path string, want, got any) []string {
	if kind(want) != kind(got) {
		return []string{fmt.Sprintf("%s: %s in PD, %s here", path, kind(want), kind(got))}
	}
	var diffs []string
	switch w := want.(type) {
	case map[string]any:
		g := got.(map[string]any)
		keys := map[string]bool{}
		for k := range w {
			keys[k] = true
		}
		for k := range g {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			wv, inW := w[k]
			gv, inG := g[k]
			switch {
			case !inG:
				diffs = append(diffs, fmt.Sprintf("%s.%s: missing here", path, k))
			case !inW:
				diffs = append(diffs, fmt.Sprintf("%s.%s: not in PD's answer", path, k))
			default:
				diffs = append(diffs, shapeDiff(path+"."+k, wv, gv)...)
			}
		}
	case []any:
		g := got.([]any)
		if len(w) == 0 {
			return nil
		}
		for i, gv := range g {
			var best []string
			for j, wv := range w {
				d := shapeDiff(fmt.Sprintf("%s[%d]", path, i), wv, gv)
				if j == 0 || len(d) < len(best) {
					best = d
				}
			}
			diffs = append(diffs, best...)
		}
	}
	return diffs
}

func TestShapeDiffDetectsDifferences(t *testing.T) {
	t.Parallel()
	cases := []struct {
		want, got string
		ndiff     int
	}{
		{`{"a":1,"b":"x"}`, `{"a":2,"b":"y"}`, 0},
		{`{"a":1}`, `{"a":"1"}`, 1},
		{`{"a":1}`, `{"a":1,"c":true}`, 1},
		{`{"a":1,"b":2}`, `{"a":1}`, 1},
		{`[{"a":1}]`, `[{"a":1},{"b":1}]`, 2},
		{`[{"a":1},{"b":1}]`, `[{"b":2},{"a":3}]`, 0},
		{`{"s":[{"x":{"y":1}}]}`, `{"s":[{"x":{"y":null}}]}`, 1},
	}
	for _, tc := range cases {
		var w, g any
		_ = json.Unmarshal([]byte(tc.want), &w)
		_ = json.Unmarshal([]byte(tc.got), &g)
		if d := shapeDiff("$", w, g); len(d) != tc.ndiff {
			t.Errorf("shapeDiff(%s, %s) = %v, want %d differences", tc.want, tc.got, d, tc.ndiff)
		}
	}
}
