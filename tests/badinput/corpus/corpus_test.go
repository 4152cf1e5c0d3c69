package corpus

import (
	"encoding/json"
	"testing"
)

// TestCases loads the corpus and builds every object: names unique, no
// name a prefix of another, every patch applies to a base of its kind.
func TestCases(t *testing.T) {
	t.Parallel()
	cases, err := Cases()
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 60 {
		t.Errorf("corpus has %d cases, want at least 60", len(cases))
	}
	for _, c := range cases {
		b, err := JSON(c)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		var obj map[string]any
		if err := json.Unmarshal(b, &obj); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if obj["kind"] != KindOf(c) {
			t.Errorf("%s: kind %v, want %s", c.Name, obj["kind"], KindOf(c))
		}
		// The integration test updates an object once its StatefulSet is
		// written: only these kinds build one of their own.
		switch KindOf(c) {
		case "TidbMonitor", "TidbDashboard", "TidbNGMonitoring":
		default:
			if c.Update != nil {
				t.Errorf("%s: an update case of kind %s, which builds no StatefulSet of its own", c.Name, KindOf(c))
			}
		}
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		msg, field string
		want       bool
	}{
		{`spec.pd.config: Invalid value`, "spec.pd.config", true},
		{`spec.pd: Invalid value: "object": requests.storage is required`, "spec.pd.requests.storage", true},
		{`spec.pdAddresses: Invalid value`, "spec.pd.requests.storage", false},
		{`spec.tikv.replicas: Invalid`, "spec.tidb.replicas", false},
	} {
		if got := Names(tc.msg, tc.field); got != tc.want {
			t.Errorf("Names(%q, %q) = %t, want %t", tc.msg, tc.field, got, tc.want)
		}
	}
}
