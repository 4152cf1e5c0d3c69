package v1alpha1

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestConfigUnmarshalJSON(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		in      string
		want    map[string]any
		wantErr string
	}{
		{
			name: "object keeps numbers exact",
			in:   `{"log": {"level": "info", "file": {"max-backups": 3}}, "ratio": 0.25, "big": 12345678901234567890, "on": true, "labels": ["a", 1]}`,
			want: map[string]any{
				"log":   map[string]any{"level": "info", "file": map[string]any{"max-backups": json.Number("3")}},
				"ratio": json.Number("0.25"), "big": json.Number("12345678901234567890"), "on": true,
				"labels": []any{"a", json.Number("1")},
			},
		},
		{name: "empty object", in: ` {} `, want: map[string]any{}},
		{
			name: "TOML string",
			in:   `"[log]\nlevel = \"warn\"\n[log.file]\nmax-backups = 5\n\n[performance]\nratio = 0.5\nenabled = true\nlist = [1, 2]\n"`,
			want: map[string]any{
				"log":         map[string]any{"level": "warn", "file": map[string]any{"max-backups": int64(5)}},
				"performance": map[string]any{"ratio": 0.5, "enabled": true, "list": []any{int64(1), int64(2)}},
			},
		},
		{name: "TOML dotted keys", in: `"log.file.max-days = 7"`, want: map[string]any{"log": map[string]any{"file": map[string]any{"max-days": int64(7)}}}},
		{name: "empty string is an empty config", in: `""`, want: map[string]any{}},
		{name: "null", in: `null`, want: nil},
		{name: "invalid TOML", in: `"[log\nlevel = "`, wantErr: "not valid TOML"},
		{name: "duplicate TOML key", in: `"a = 1\na = 2"`, wantErr: "not valid TOML"},
		{name: "number", in: `42`, wantErr: "must be an object or a TOML string"},
		{name: "array", in: `[{"a": 1}]`, wantErr: "must be an object or a TOML string"},
		{name: "bool", in: `true`, wantErr: "must be an object or a TOML string"},
		{name: "TOML nan", in: `"[a]\nb = nan"`, wantErr: "a.b: nan and inf cannot be stored"},
		{name: "TOML inf in a list", in: `"l = [1.0, inf]"`, wantErr: "l[1]: nan and inf"},
		{name: "truncated object", in: `{"a": `, wantErr: "unexpected EOF"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg := &Config{Items: map[string]any{"stale": true}}
			if err := cfg.UnmarshalJSON([]byte(c.in)); err != nil {
				t.Fatalf("UnmarshalJSON(%s) error = %v, want none: reading a config never fails", c.in, err)
			}
			if c.wantErr != "" {
				assertInvalidConfig(t, cfg, c.in, c.wantErr)
				return
			}
			if cfg.IsInvalid() {
				t.Fatalf("UnmarshalJSON(%s) marked invalid: %s", c.in, cfg.InvalidReason)
			}
			if diff := cmp.Diff(c.want, cfg.Items); diff != "" {
				t.Errorf("UnmarshalJSON(%s) mismatch (-want +got):\n%s", c.in, diff)
			}
		})
	}
}

// assertInvalidConfig checks that cfg kept in as received, says why with
// reason, holds no items and writes in back unchanged.
func assertInvalidConfig(t *testing.T, cfg *Config, in, reason string) {
	t.Helper()
	if !cfg.IsInvalid() || !strings.Contains(cfg.InvalidReason, reason) {
		t.Fatalf("UnmarshalJSON(%s): invalid %v, reason %q, want one containing %q", in, cfg.IsInvalid(), cfg.InvalidReason, reason)
	}
	if cfg.Items != nil {
		t.Errorf("UnmarshalJSON(%s): items %v, want nil", in, cfg.Items)
	}
	if json.Valid([]byte(in)) { // the API server only ever hands over valid JSON
		var want bytes.Buffer
		_ = json.Compact(&want, []byte(in))
		out, err := json.Marshal(cfg)
		if err != nil || string(out) != want.String() {
			t.Errorf("MarshalJSON after UnmarshalJSON(%s) = %s, %v; want the input unchanged", in, out, err)
		}
	}
	if cp := cfg.DeepCopy(); cp.InvalidReason != cfg.InvalidReason || string(cp.Invalid) != in {
		t.Errorf("DeepCopy lost the invalid input: %#v", cp)
	}
}

// TestConfigInSpec decodes configs the way the API server hands them over:
// embedded in a component spec, absent, null, or of the wrong type.
func TestConfigInSpec(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		in          string
		wantNil     bool
		want        map[string]any
		wantInvalid bool
	}{
		{name: "absent", in: `{"replicas": 1}`, wantNil: true},
		{name: "null", in: `{"replicas": 1, "config": null}`, wantNil: true},
		{name: "object", in: `{"config": {"a": "b"}}`, want: map[string]any{"a": "b"}},
		{name: "TOML", in: `{"config": "a = \"b\""}`, want: map[string]any{"a": "b"}},
		{name: "wrong type is kept, not an error", in: `{"config": 1.5}`, wantInvalid: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var spec TiDBSpec
			if err := json.Unmarshal([]byte(c.in), &spec); err != nil {
				t.Fatalf("json.Unmarshal(%s) error = %v", c.in, err)
			}
			if c.wantInvalid {
				if !spec.Config.IsInvalid() {
					t.Fatalf("json.Unmarshal(%s): config %#v, want invalid", c.in, spec.Config)
				}
				return
			}
			if c.wantNil {
				if spec.Config != nil {
					t.Errorf("config = %#v, want nil", spec.Config)
				}
				return
			}
			if spec.Config == nil {
				t.Fatalf("config = nil, want %v", c.want)
			}
			if diff := cmp.Diff(c.want, spec.Config.Items); diff != "" {
				t.Errorf("config mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfigMarshalJSON(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   *Config
		want string
	}{
		{name: "nil items", in: &Config{}, want: `{}`},
		{name: "empty items", in: NewConfig(map[string]any{}), want: `{}`},
		{
			name: "nested values keep their text",
			in: NewConfig(map[string]any{
				"log": map[string]any{"level": "info"}, "n": json.Number("12345678901234567890"), "i": int64(5), "f": 0.5, "l": []any{"x", true},
			}),
			want: `{"f":0.5,"i":5,"l":["x",true],"log":{"level":"info"},"n":12345678901234567890}`,
		},
		{name: "inside a spec", in: nil, want: `{"replicas":0,"config":{"a":"b"}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var got []byte
			var err error
			if c.in == nil {
				got, err = json.Marshal(PumpSpec{Config: NewConfig(map[string]any{"a": "b"})})
			} else {
				got, err = json.Marshal(c.in)
			}
			if err != nil {
				t.Fatalf("json.Marshal() error = %v", err)
			}
			if string(got) != c.want {
				t.Errorf("json.Marshal() = %s, want %s", got, c.want)
			}
		})
	}
}

// TestConfigRoundTrip checks that a TOML-string config re-reads as the same tree once serialised as an object.
func TestConfigRoundTrip(t *testing.T) {
	t.Parallel()
	var first Config
	if err := json.Unmarshal([]byte(`"[a]\nb = 1\nc = \"d\""`), &first); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(first)
	if err != nil {
		t.Fatal(err)
	}
	var second Config
	if err := json.Unmarshal(data, &second); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": map[string]any{"b": json.Number("1"), "c": "d"}}
	if diff := cmp.Diff(want, second.Items); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
}

func TestConfigDeepCopy(t *testing.T) {
	t.Parallel()
	orig := NewConfig(map[string]any{
		"log":    map[string]any{"file": map[string]any{"max-backups": int64(3)}},
		"list":   []any{map[string]any{"k": "v"}, "x"},
		"tables": []map[string]any{{"name": "t1"}},
	})
	want := orig.DeepCopy()
	cp := orig.DeepCopy()
	cp.Items["log"].(map[string]any)["file"].(map[string]any)["max-backups"] = int64(9)
	cp.Items["list"].([]any)[0].(map[string]any)["k"] = "changed"
	cp.Items["list"].([]any)[1] = "y"
	cp.Items["tables"].([]map[string]any)[0]["name"] = "t2"
	cp.Items["new"] = true
	if diff := cmp.Diff(want, orig); diff != "" {
		t.Errorf("changing the copy changed the original (-want +got):\n%s", diff)
	}

	if got := (*Config)(nil).DeepCopy(); got != nil {
		t.Errorf("nil DeepCopy() = %v, want nil", got)
	}
	if got := (&Config{}).DeepCopy(); got == nil || got.Items != nil {
		t.Errorf("empty DeepCopy() = %#v, want an empty Config", got)
	}

	items := map[string]any{"a": map[string]any{"b": 1}}
	c := NewConfig(items)
	items["a"].(map[string]any)["b"] = 2
	if got := c.Items["a"].(map[string]any)["b"]; got != 1 {
		t.Errorf("NewConfig shares its input: b = %v, want 1", got)
	}

	spec := &TiKVSpec{Config: NewConfig(map[string]any{"a": "b"})}
	specCopy := spec.DeepCopy()
	specCopy.Config.Items["a"] = "c"
	if spec.Config.Items["a"] != "b" {
		t.Errorf("TiKVSpec.DeepCopy shares the config")
	}
}
