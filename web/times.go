package web

import (
	"fmt"
	"html/template"
	"time"
)

// since is how long ago t was, in words a glance takes in ("2 min 5 s"), as a time
// element the script ticks on (class "elapsed").
func since(t *time.Time) template.HTML {
	d := time.Since(*t).Round(time.Second)
	words := fmt.Sprintf("%d min %d s", int(d.Minutes()), int(d.Seconds())%60)
	if d < time.Minute {
		words = fmt.Sprintf("%d s", int(d.Seconds()))
	}
	return template.HTML(`<time class="elapsed" datetime="` + t.UTC().Format(time.RFC3339Nano) + `">` + words + `</time>`)
}

// timeTag is a moment as the pages show it: in UTC, which the script turns into the
// reader's time zone and words ("3 min ago"), keeping the exact UTC time on hover.
// Without the script it stays UTC.
func timeTag(t time.Time) template.HTML {
	t = t.UTC()
	return template.HTML(`<time datetime="` + t.Format(time.RFC3339Nano) + `" title="` + t.Format("2006-01-02 15:04:05 UTC") + `">` +
		t.Format("2006-01-02 15:04 UTC") + `</time>`)
}
