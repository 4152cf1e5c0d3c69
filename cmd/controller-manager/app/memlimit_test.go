package app

import "testing"

func TestSoftMemoryLimit(t *testing.T) {
	t.Parallel()
	none := func(string) string { return "" }
	for _, c := range []struct {
		flag string
		env  func(string) string
		want int64
	}{
		{"", none, 0},
		{"150Mi", none, 150 << 20 * 9 / 10},
		{"536870912", none, 536870912 * 9 / 10}, // the downward API's bytes
		{"150Mi", func(k string) string { return map[string]string{"GOMEMLIMIT": "100MiB"}[k] }, 0},
	} {
		limit, err := parseMemoryLimit(c.flag)
		if err != nil {
			t.Fatalf("%q: %v", c.flag, err)
		}
		if got := softMemoryLimit(limit, c.env); got != c.want {
			t.Errorf("--memory-limit=%q: soft limit %d, want %d", c.flag, got, c.want)
		}
	}
	for _, bad := range []string{"lots", "-1Gi"} {
		o := NewOptions()
		o.MemoryLimit = bad
		if err := o.Validate(); err == nil {
			t.Errorf("--memory-limit=%q accepted", bad)
		}
	}
}
