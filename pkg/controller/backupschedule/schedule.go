package backupschedule

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"
)

// MaxMissedSchedules is how many scheduled times may have passed unserved
// before a sync stops counting them and fast-forwards: beyond it the
// schedule records now as served and creates no Backup for the missed
// times (the TiDB Operator's limit), so an operator that was down for a
// long time neither iterates for ever nor starts a storm of catch-up
// backups.
const MaxMissedSchedules = 1000

// parseSchedule parses spec as the TiDB Operator does (cron.ParseStandard:
// five fields, descriptors such as @daily, "@every <duration>", an optional
// CRON_TZ= prefix). The error names the schedule.
func parseSchedule(spec string) (cron.Schedule, error) {
	s, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, fmt.Errorf("parse schedule %q: %w", spec, err)
	}
	return s, nil
}

// dueTimes is what a schedule owes at one instant.
type dueTimes struct {
	// Due is the latest scheduled time in (from, now]; zero when none.
	Due time.Time
	// Next is the first scheduled time after now, when the schedule is next
	// owed a Backup; zero when the schedule has no further time (a date
	// that never comes, such as 30 February).
	Next time.Time
	// Missed counts the scheduled times in (from, now], up to
	// MaxMissedSchedules+1.
	Missed int
	// FastForward is set when more than MaxMissedSchedules times passed:
	// Due is then zero, and the caller records now as served.
	FastForward bool
}

// scheduleDue walks sched from from (exclusive) to now (inclusive) and
// returns the latest time owed, the next time after now, and whether the
// walk gave up after MaxMissedSchedules (see dueTimes). It is pure.
func scheduleDue(sched cron.Schedule, from, now time.Time) dueTimes {
	var d dueTimes
	t := sched.Next(from)
	for !t.IsZero() && !t.After(now) {
		d.Missed++
		if d.Missed > MaxMissedSchedules {
			return dueTimes{Next: sched.Next(now), Missed: d.Missed, FastForward: true}
		}
		d.Due = t
		t = sched.Next(t)
	}
	d.Next = t
	return d
}
