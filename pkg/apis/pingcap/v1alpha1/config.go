package v1alpha1

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/pelletier/go-toml/v2"
)

// Config is a component's free-form configuration (`spec.<component>.config`).
// It is written in YAML either as a map (`config: {log: {level: info}}`) or as
// a TOML document in a string (`config: |` followed by TOML), exactly as the
// TiDB Operator accepts both. It always serialises back as a JSON object.
// Numbers keep their exact text (json.Number) or TOML type (int64, float64).
//
// +kubebuilder:validation:Type=""
// +kubebuilder:validation:Schemaless
// +kubebuilder:pruning:PreserveUnknownFields
// +k8s:deepcopy-gen=false
type Config struct {
	// Items holds the parsed configuration tree: nested map[string]any,
	// []any, string, bool, json.Number, int64, float64 and TOML date types.
	Items map[string]any `json:"-"`
}

// NewConfig returns a Config holding a deep copy of items.
func NewConfig(items map[string]any) *Config {
	return &Config{Items: deepCopyMap(items)}
}

// UnmarshalJSON accepts a JSON object, a JSON string holding TOML, or null.
// It errors when the string is not valid TOML or the value is another JSON type.
func (c *Config) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	switch {
	case bytes.Equal(data, []byte("null")):
		c.Items = nil
		return nil
	case len(data) > 0 && data[0] == '"':
		var doc string
		if err := json.Unmarshal(data, &doc); err != nil {
			return fmt.Errorf("config: %w", err)
		}
		items := map[string]any{}
		if err := toml.Unmarshal([]byte(doc), &items); err != nil {
			return fmt.Errorf("config: the string is not valid TOML: %w", err)
		}
		c.Items = items
		return nil
	case len(data) > 0 && data[0] == '{':
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		items := map[string]any{}
		if err := dec.Decode(&items); err != nil {
			return fmt.Errorf("config: %w", err)
		}
		c.Items = items
		return nil
	default:
		return fmt.Errorf("config: must be an object or a TOML string, got %.20q", string(data))
	}
}

// MarshalJSON writes the configuration as a JSON object ({} when empty).
func (c Config) MarshalJSON() ([]byte, error) {
	if c.Items == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(c.Items)
}

// DeepCopyInto copies the configuration tree into out; maps and slices are
// copied recursively, scalar values are shared (they are immutable).
func (c *Config) DeepCopyInto(out *Config) {
	out.Items = deepCopyMap(c.Items)
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
