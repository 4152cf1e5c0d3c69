package tikvapi

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// ErrLeaderCountNotFound reports that the metrics text has no `tikv_raftstore_region_count{type="leader"}`
// sample, e.g. because the TiKV has not started its raftstore yet.
var ErrLeaderCountNotFound = errors.New(`no tikv_raftstore_region_count{type="leader"} sample`)

const (
	regionCountMetric = "tikv_raftstore_region_count"
	// maxLineBytes bounds one line of the metrics text.
	maxLineBytes = 1 << 20
)

// ParseLeaderCount reads Prometheus text exposition (format 0.0.4) and returns the value of the first
// `tikv_raftstore_region_count` sample whose label `type` is "leader", whatever its other labels and
// their order. It stops reading at that sample. It errors with ErrLeaderCountNotFound when there is none,
// and on a malformed sample of that metric or a value that is not a non-negative count.
func ParseLeaderCount(r io.Reader) (int, error) {
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 0, 64<<10), maxLineBytes)
	for scanner.Scan() {
		rest, ok := cutMetricName(strings.TrimSpace(scanner.Text()), regionCountMetric)
		if !ok {
			continue
		}
		labels, value, err := parseSample(rest)
		if err != nil {
			return 0, fmt.Errorf("%s sample %q: %w", regionCountMetric, scanner.Text(), err)
		}
		if labels["type"] == "leader" {
			return parseCount(value)
		}
	}
	if err := scanner.Err(); err != nil {
		return 0, fmt.Errorf("read metrics: %w", err)
	}
	return 0, ErrLeaderCountNotFound
}

// cutMetricName returns what follows name on a sample line of exactly that metric (not a comment, not
// a longer name such as name_sum).
func cutMetricName(line, name string) (string, bool) {
	rest, ok := strings.CutPrefix(line, name)
	if !ok || rest == "" {
		return "", false
	}
	switch rest[0] {
	case '{', ' ', '\t':
		return rest, true
	}
	return "", false
}

// parseSample splits `{labels} value [timestamp]` into the labels and the value text.
func parseSample(rest string) (map[string]string, string, error) {
	labels := map[string]string{}
	if strings.HasPrefix(rest, "{") {
		var err error
		labels, rest, err = parseLabels(rest[1:])
		if err != nil {
			return nil, "", err
		}
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 || len(fields) > 2 {
		return nil, "", errors.New("want a value and an optional timestamp after the labels")
	}
	return labels, fields[0], nil
}

// parseLabels parses `name="value",…}` (after the opening brace) and returns the labels and what follows
// the closing brace. Values may contain escaped quotes, backslashes and newlines.
func parseLabels(s string) (map[string]string, string, error) {
	labels := map[string]string{}
	for {
		s = strings.TrimLeft(s, " \t,")
		if strings.HasPrefix(s, "}") {
			return labels, s[1:], nil
		}
		name, rest, ok := strings.Cut(s, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, `"{}, `) {
			return nil, "", errors.New("malformed label")
		}
		rest = strings.TrimLeft(rest, " \t")
		if !strings.HasPrefix(rest, `"`) {
			return nil, "", fmt.Errorf("label %s: value is not quoted", name)
		}
		value, after, err := unquoteLabelValue(rest[1:])
		if err != nil {
			return nil, "", fmt.Errorf("label %s: %w", name, err)
		}
		labels[name], s = value, after
	}
}

// unquoteLabelValue reads a label value up to its closing quote (exclusive of the opening one).
func unquoteLabelValue(s string) (string, string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return b.String(), s[i+1:], nil
		case c == '\\' && i+1 < len(s):
			i++
			if s[i] == 'n' {
				b.WriteByte('\n')
			} else {
				b.WriteByte(s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", errors.New("unterminated value")
}

// parseCount parses a sample value as a non-negative whole count (Prometheus renders gauges as floats,
// e.g. "34" or "3.4e+01").
func parseCount(value string) (int, error) {
	f, err := strconv.ParseFloat(value, 64)
	if err != nil {
		return 0, fmt.Errorf("leader count %q: %w", value, err)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > math.MaxInt32 {
		return 0, fmt.Errorf("leader count %q is not a count", value)
	}
	return int(math.Round(f)), nil
}
