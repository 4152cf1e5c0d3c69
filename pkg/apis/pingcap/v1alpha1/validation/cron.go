package validation

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// cronField is one of the five fields of a standard cron expression.
type cronField struct {
	name     string
	min, max int
	names    map[string]int // symbolic values, lower case
}

var cronFields = []cronField{
	{name: "minute", min: 0, max: 59},
	{name: "hour", min: 0, max: 23},
	{name: "day of month", min: 1, max: 31},
	{name: "month", min: 1, max: 12, names: map[string]int{
		"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
		"jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
	}},
	{name: "day of week", min: 0, max: 6, names: map[string]int{
		"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6,
	}},
}

var cronDescriptors = []string{"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}

// validateCron reports why spec is not a schedule the standard cron parser
// (robfig/cron ParseStandard, which the TiDB Operator uses) accepts: five
// space-separated fields (minute hour day-of-month month day-of-week, each a
// comma list of *, ?, values, names, ranges a-b and steps /n), a descriptor
// such as @daily, or "@every <positive Go duration>", optionally preceded by
// CRON_TZ=<zone> or TZ=<zone>. It returns nil for a valid schedule.
func validateCron(spec string) error {
	spec = strings.TrimSpace(spec)
	if strings.HasPrefix(spec, "CRON_TZ=") || strings.HasPrefix(spec, "TZ=") {
		zone, rest, _ := strings.Cut(spec, " ")
		_, name, _ := strings.Cut(zone, "=")
		if _, err := time.LoadLocation(name); err != nil {
			return fmt.Errorf("unknown time zone %q", name)
		}
		spec = strings.TrimSpace(rest)
	}
	if strings.HasPrefix(spec, "@") {
		return validateCronDescriptor(spec)
	}
	fields := strings.Fields(spec)
	if len(fields) != len(cronFields) {
		return fmt.Errorf("must have 5 space-separated fields (minute hour day-of-month month day-of-week), found %d", len(fields))
	}
	for i, f := range fields {
		for _, part := range strings.Split(f, ",") {
			if err := cronFields[i].validatePart(part); err != nil {
				return fmt.Errorf("%s field %q: %w", cronFields[i].name, f, err)
			}
		}
	}
	return nil
}

func validateCronDescriptor(spec string) error {
	if rest, ok := strings.CutPrefix(spec, "@every "); ok {
		d, err := time.ParseDuration(strings.TrimSpace(rest))
		if err != nil || d <= 0 {
			return fmt.Errorf("@every needs a positive Go duration, such as @every 6h")
		}
		return nil
	}
	if slices.Contains(cronDescriptors, spec) {
		return nil
	}
	return fmt.Errorf("unknown descriptor %q; use one of %s or @every <duration>", spec, strings.Join(cronDescriptors, ", "))
}

// validatePart checks one comma-separated item: *, ?, a value, a range a-b,
// each optionally followed by /step.
func (f cronField) validatePart(part string) error {
	rangePart, stepPart, hasStep := strings.Cut(part, "/")
	if hasStep {
		step, err := strconv.Atoi(stepPart)
		if err != nil || step <= 0 {
			return fmt.Errorf("step %q must be a positive number", stepPart)
		}
	}
	if rangePart == "*" || rangePart == "?" {
		return nil
	}
	lowPart, highPart, isRange := strings.Cut(rangePart, "-")
	low, err := f.value(lowPart)
	if err != nil {
		return err
	}
	high := low
	if isRange {
		if high, err = f.value(highPart); err != nil {
			return err
		}
	}
	if low > high {
		return fmt.Errorf("range %q starts after it ends", rangePart)
	}
	return nil
}

// value parses a number or name and checks it lies within the field's bounds.
func (f cronField) value(s string) (int, error) {
	if n, ok := f.names[strings.ToLower(s)]; ok {
		return n, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	if n < f.min || n > f.max {
		return 0, fmt.Errorf("%d is out of range %d-%d", n, f.min, f.max)
	}
	return n, nil
}
