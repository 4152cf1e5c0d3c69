package validation

import "testing"

func TestValidateCron(t *testing.T) {
	t.Parallel()
	cases := []struct {
		spec  string
		valid bool
	}{
		{"0 2 * * *", true},
		{"*/15 * * * *", true},
		{"0 0-23/2 1,15 * MON-FRI", true},
		{"30 4 ? jan-dec sun", true},
		{"5/10 * * * *", true},
		{"59 23 31 12 6", true},
		{"  0 2 * * *  ", true},
		{"CRON_TZ=UTC 0 2 * * *", true},
		{"TZ=UTC 0 2 * * *", true},
		{"@hourly", true},
		{"@daily", true},
		{"@midnight", true},
		{"@weekly", true},
		{"@monthly", true},
		{"@yearly", true},
		{"@annually", true},
		{"@every 6h", true},
		{"@every 1h30m", true},

		{"", false},
		{"0 2 * *", false},
		{"0 0 2 * * *", false},
		{"60 * * * *", false},
		{"* 24 * * *", false},
		{"* * 0 * *", false},
		{"* * * 13 *", false},
		{"* * * * 7", false},
		{"* * * * funday", false},
		{"10-5 * * * *", false},
		{"*/0 * * * *", false},
		{"*/x * * * *", false},
		{"1-2-3 * * * *", false},
		{"-1 * * * *", false},
		{"1,,2 * * * *", false},
		{"@often", false},
		{"@every", false},
		{"@every soon", false},
		{"@every -1h", false},
		{"CRON_TZ=Nowhere/Atlantis 0 2 * * *", false},
	}
	for _, c := range cases {
		t.Run(c.spec, func(t *testing.T) {
			t.Parallel()
			err := validateCron(c.spec)
			if (err == nil) != c.valid {
				t.Errorf("validateCron(%q) = %v, want valid=%v", c.spec, err, c.valid)
			}
		})
	}
}
