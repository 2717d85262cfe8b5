package web

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
)

// The usage page, for owners: the account's last 30 days per member, project and
// agent, and the same as a CSV file.

// usageTable is one table of the page: its dimension as the CSV names it, its
// caption and the heading of its first column.
type usageTable struct {
	Dimension, Caption, Heading string
	Rows                        []*core.UsageRow
}

type usageData struct {
	Usage  *core.Usage
	Tables []usageTable
}

func usageTables(u *core.Usage) []usageTable {
	return []usageTable{
		{"member", "Per member", "Member", u.Members},
		{"project", "Per project", "Project", u.Projects},
		{"agent", "Per agent", "Agent", u.Agents},
	}
}

func (a *app) usagePage(c *fiber.Ctx) error {
	u, err := a.core.Usage(c.UserContext(), sessionOf(c))
	if err != nil {
		return a.fail(c, err)
	}
	return a.render(c, fiber.StatusOK, "usage", page{Title: "Usage", Data: usageData{Usage: u, Tables: usageTables(u)}})
}

// usageCSV is the page as a spreadsheet's file: a header, then one row per table and
// key. It is written into a buffer first, like the pages, so a failure is an error
// page and not half a file.
func (a *app) usageCSV(c *fiber.Ctx) error {
	u, err := a.core.Usage(c.UserContext(), sessionOf(c))
	if err != nil {
		return a.fail(c, err)
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"dimension", "key", "name", "workspaces", "turns", "agent_seconds", "failures"})
	for _, t := range usageTables(u) {
		for _, r := range t.Rows {
			w.Write([]string{t.Dimension, spreadsheetSafe(r.Key), spreadsheetSafe(r.Name), strconv.FormatInt(r.Workspaces, 10),
				strconv.FormatInt(r.Turns, 10), strconv.FormatFloat(r.AgentTime.Seconds(), 'f', 3, 64), strconv.FormatInt(r.Failures, 10)})
		}
	}
	if w.Flush(); w.Error() != nil {
		return fmt.Errorf("usage csv: %w", w.Error())
	}
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="usage-`+u.Until.UTC().Format("2006-01-02")+`.csv"`)
	c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
	return c.Send(b.Bytes())
}

// spreadsheetSafe keeps a cell a spreadsheet would read as a formula (names are
// people's and chat platforms' to choose) as text: a leading quote, which the
// spreadsheet shows as text and does not run. Tab and carriage return start
// formulas in some spreadsheets too.
func spreadsheetSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// duration is agent time in words a glance takes in: "1 h 5 min", "2 min 30 s", "4 s".
func duration(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, s := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	switch {
	case h > 0:
		return fmt.Sprintf("%d h %d min", h, m)
	case m > 0:
		return fmt.Sprintf("%d min %d s", m, s)
	}
	return fmt.Sprintf("%d s", s)
}
