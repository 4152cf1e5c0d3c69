package v1alpha1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"

	"github.com/pelletier/go-toml/v2"
)

// Config is a component's free-form configuration (`spec.<component>.config`).
// It is written in YAML either as a map (`config: {log: {level: info}}`) or as
// a TOML document in a string (`config: |` followed by TOML), exactly as the
// TiDB Operator accepts both. It always serialises back as a JSON object.
// Numbers keep their exact text (json.Number) or TOML type (int64, float64).
//
// Reading a Config never fails: a value the API server accepted but that is
// neither a map nor valid TOML (a number, a list, a broken TOML string) is
// kept as it was received in Invalid, with the reason in InvalidReason, so
// that one user's typo cannot stop an informer from listing every other
// object. Validation reports such a Config before anything is written.
//
// +kubebuilder:validation:Type=""
// +kubebuilder:validation:Schemaless
// +kubebuilder:pruning:PreserveUnknownFields
// +k8s:deepcopy-gen=false
type Config struct {
	// Items holds the parsed configuration tree: nested map[string]any,
	// []any, string, bool, json.Number, int64, float64 and TOML date types.
	Items map[string]any `json:"-"`
	// Invalid is the input exactly as received when it could not be read
	// (Items is then nil); it is written back unchanged by MarshalJSON.
	Invalid json.RawMessage `json:"-"`
	// InvalidReason says why Invalid could not be read.
	InvalidReason string `json:"-"`
}

// NewConfig returns a Config holding a deep copy of items.
func NewConfig(items map[string]any) *Config {
	return &Config{Items: deepCopyMap(items)}
}

// UnmarshalJSON accepts a JSON object, a JSON string holding TOML, or null.
// Any other input, or a string that is not valid TOML, is kept in Invalid
// and InvalidReason instead of failing (see Config); it never errors.
func (c *Config) UnmarshalJSON(data []byte) error {
	items, err := parseConfig(bytes.TrimSpace(data))
	c.Items, c.Invalid, c.InvalidReason = items, nil, ""
	if err != nil {
		c.Items = nil
		c.Invalid = append(json.RawMessage(nil), data...)
		c.InvalidReason = err.Error()
	}
	return nil
}

// parseConfig reads a JSON object, a TOML string or null (nil items).
func parseConfig(data []byte) (map[string]any, error) {
	switch {
	case bytes.Equal(data, []byte("null")):
		return nil, nil
	case len(data) > 0 && data[0] == '"':
		var doc string
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, err
		}
		items := map[string]any{}
		if err := toml.Unmarshal([]byte(doc), &items); err != nil {
			return nil, fmt.Errorf("the string is not valid TOML: %w", err)
		}
		if key := nonFinite(items); key != "" {
			return nil, fmt.Errorf("%s: nan and inf cannot be stored (the object is JSON)", key)
		}
		return items, nil
	case len(data) > 0 && data[0] == '{':
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		items := map[string]any{}
		if err := dec.Decode(&items); err != nil {
			return nil, err
		}
		return items, nil
	default:
		return nil, fmt.Errorf("must be an object or a TOML string, got %.20q", string(data))
	}
}

// nonFinite returns the dotted key of the first NaN or infinite number in
// items (TOML has them, JSON does not), or "".
func nonFinite(items map[string]any) string {
	for _, k := range sortedKeys(items) {
		switch v := items[k].(type) {
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return k
			}
		case map[string]any:
			if sub := nonFinite(v); sub != "" {
				return k + "." + sub
			}
		case []any:
			for i, x := range v {
				if sub := nonFinite(map[string]any{fmt.Sprint(i): x}); sub != "" {
					return k + "[" + sub + "]"
				}
			}
		}
	}
	return ""
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// IsInvalid reports whether the configuration as received could not be read.
func (c *Config) IsInvalid() bool { return c != nil && c.InvalidReason != "" }

// MarshalJSON writes the configuration as a JSON object ({} when empty), or
// an input that could not be read exactly as it was received.
func (c Config) MarshalJSON() ([]byte, error) {
	if c.InvalidReason != "" && len(c.Invalid) > 0 {
		return c.Invalid, nil
	}
	if c.Items == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(c.Items)
}

// DeepCopyInto copies the configuration tree into out; maps and slices are
// copied recursively, scalar values are shared (they are immutable).
func (c *Config) DeepCopyInto(out *Config) {
	out.Items = deepCopyMap(c.Items)
	out.Invalid = append(json.RawMessage(nil), c.Invalid...)
	if c.Invalid == nil {
		out.Invalid = nil
	}
	out.InvalidReason = c.InvalidReason
}

// DeepCopy returns a deep copy of c, or nil for a nil c.
func (c *Config) DeepCopy() *Config {
	if c == nil {
		return nil
	}
	out := new(Config)
	c.DeepCopyInto(out)
	return out
}

func deepCopyMap(in map[string]any) map[string]any {
	if in == nil {
		return nil
	}
	out := make(map[string]any, len(in))
	for k, v := range in {
		out[k] = deepCopyValue(v)
	}
	return out
}

func deepCopyValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return deepCopyMap(t)
	case []any:
		out := make([]any, len(t))
		for i := range t {
			out[i] = deepCopyValue(t[i])
		}
		return out
	case []map[string]any:
		out := make([]map[string]any, len(t))
		for i := range t {
			out[i] = deepCopyMap(t[i])
		}
		return out
	default:
		return v
	}
}
