package backupschedule

import (
	"testing"
	"time"
)

func TestScheduleDue(t *testing.T) {
	t.Parallel()
	at := func(h, m, s int) time.Time { return time.Date(2026, 1, 1, h, m, s, 0, time.UTC) }
	for _, tc := range []struct {
		name      string
		spec      string
		from, now time.Time
		want      dueTimes
	}{
		{name: "nothing due", spec: "0 * * * *", from: at(0, 0, 0), now: at(0, 59, 59),
			want: dueTimes{Next: at(1, 0, 0)}},
		{name: "exactly due", spec: "0 * * * *", from: at(0, 0, 0), now: at(1, 0, 0),
			want: dueTimes{Due: at(1, 0, 0), Next: at(2, 0, 0), Missed: 1}},
		{name: "latest of several", spec: "*/15 * * * *", from: at(0, 0, 0), now: at(0, 50, 0),
			want: dueTimes{Due: at(0, 45, 0), Next: at(1, 0, 0), Missed: 3}},
		{name: "every", spec: "@every 90s", from: at(0, 0, 0), now: at(0, 4, 0),
			want: dueTimes{Due: at(0, 3, 0), Next: at(0, 4, 30), Missed: 2}},
		// 08:00 in Shanghai is 00:00 UTC: from is that time, so the next is a day later.
		{name: "time zone", spec: "CRON_TZ=Asia/Shanghai 0 8 * * *", from: at(0, 0, 0), now: at(1, 0, 0),
			want: dueTimes{Next: at(24, 0, 0)}},
		{name: "from in the future (clock skew)", spec: "0 * * * *", from: at(5, 0, 0), now: at(1, 0, 0),
			want: dueTimes{Next: at(6, 0, 0)}},
		{name: "beyond the limit", spec: "* * * * *", from: at(0, 0, 0).Add(-1001 * time.Minute), now: at(0, 0, 30),
			want: dueTimes{Next: at(0, 1, 0), Missed: MaxMissedSchedules + 1, FastForward: true}},
		{name: "exactly the limit", spec: "* * * * *", from: at(0, 0, 0).Add(-1000 * time.Minute), now: at(0, 0, 30),
			want: dueTimes{Due: at(0, 0, 0), Next: at(0, 1, 0), Missed: MaxMissedSchedules}},
		{name: "never", spec: "0 0 30 2 *", from: at(0, 0, 0), now: at(1, 0, 0), want: dueTimes{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sched, err := parseSchedule(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			got := scheduleDue(sched, tc.from, tc.now)
			if !got.Due.Equal(tc.want.Due) || !got.Next.Equal(tc.want.Next) || got.Missed != tc.want.Missed || got.FastForward != tc.want.FastForward {
				t.Fatalf("scheduleDue = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestParseScheduleRejects(t *testing.T) {
	t.Parallel()
	for _, spec := range []string{"", "61 * * * *", "* * * *", "@every", "@fortnightly", "CRON_TZ=Nowhere/Land 0 * * * *"} {
		if _, err := parseSchedule(spec); err == nil {
			t.Errorf("parseSchedule(%q) accepted it", spec)
		}
	}
}
