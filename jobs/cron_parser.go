package jobs

import (
	"errors"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/wshub/wshub/core"
)

// CronParser is core's CronParser on robfig/cron's standard parser: five fields
// (minute, hour, day of month, month, day of week) or a descriptor such as @daily,
// read in the schedule's zone.
type CronParser struct{}

var _ core.CronParser = CronParser{}

// ParseCron parses expr, its times read in loc.
func (CronParser) ParseCron(expr string, loc *time.Location) (core.CronSpec, error) {
	s, err := cron.ParseStandard(expr)
	if err != nil {
		return nil, err
	}
	spec, ok := s.(*cron.SpecSchedule)
	if !ok { // @every: core refuses it before, as replicas would not agree on its ticks
		return nil, errors.New("not a calendar schedule")
	}
	spec.Location = loc // descriptors come back in the hub's zone
	return spec, nil
}
