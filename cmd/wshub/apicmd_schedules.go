package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/wshub/wshub/client"
)

// The schedules commands (an extension of the API): wshub schedules ...
var scheduleCommands = map[string]apiCommand{
	"schedules create": {"wshub schedules create --name N --project ID --agent A --model M --prompt TEXT|- --cron EXPR [--zone TZ] [--mode new|standing] [--json]",
		`wshub schedules create --name "weekly deps" --project prj_123 --agent agent_1 --model sonnet --prompt "Update the dependencies" --cron "0 9 * * 1" --zone Europe/Paris`,
		schedulesCreate},
	"schedules list":   {"wshub schedules list [--json]", "wshub schedules list", schedulesList},
	"schedules get":    {"wshub schedules get ID [--json]", "wshub schedules get sch_123", scheduleCall((*client.Client).GetSchedule)},
	"schedules pause":  {"wshub schedules pause ID [--json]", "wshub schedules pause sch_123", scheduleCall((*client.Client).PauseSchedule)},
	"schedules resume": {"wshub schedules resume ID [--json]", "wshub schedules resume sch_123", scheduleCall((*client.Client).ResumeSchedule)},
	"schedules run":    {"wshub schedules run ID [--json]", "wshub schedules run sch_123", schedulesRun},
	"schedules runs":   {"wshub schedules runs ID [--json]", "wshub schedules runs sch_123", schedulesRuns},
	"schedules delete": {"wshub schedules delete ID", "wshub schedules delete sch_123", schedulesDelete},
}

// The schedules commands join the client commands here, in this order, so that the
// client commands' table and order stay one edit away from this file.
func init() {
	for _, name := range []string{"schedules create", "schedules list", "schedules get", "schedules pause", "schedules resume",
		"schedules run", "schedules runs", "schedules delete"} {
		apiCommands[name] = scheduleCommands[name]
		apiCommandOrder = append(apiCommandOrder, name)
	}
}

func schedulesCreate(ctx context.Context, e *apiEnv, fs *flag.FlagSet, args []string) int {
	var in client.ScheduleInput
	fs.StringVar(&in.Name, "name", "", "the schedule's name (its runs' workspaces show it as their author)")
	fs.StringVar(&in.ProjectID, "project", "", "the project")
	fs.StringVar(&in.Agent, "agent", "", "agent_1 to agent_4")
	fs.StringVar(&in.Model, "model", "", "the agent's model")
	prompt := fs.String("prompt", "", "the prompt each run sends (- reads standard input)")
	fs.StringVar(&in.Cron, "cron", "", `five fields (minute hour day month weekday) or @daily, @weekly...; e.g. "0 9 * * 1"`)
	fs.StringVar(&in.TimeZone, "zone", "", "the IANA time zone the expression is read in (default UTC)")
	fs.StringVar(&in.Mode, "mode", "", "new (a workspace per run, the default) or standing (one workspace, a message per run)")
	if _, ok := parseArgs(fs, args, 0); !ok {
		return exitUsage
	}
	text, err := e.readText(*prompt)
	if err != nil {
		fmt.Fprintln(e.stderr, err)
		return exitUsage
	}
	in.Prompt = text
	sc, err := e.c.CreateSchedule(ctx, in)
	if err != nil {
		return e.fail(err)
	}
	e.showSchedules([]client.Schedule{*sc}, "schedule")
	return 0
}

func schedulesList(ctx context.Context, e *apiEnv, fs *flag.FlagSet, args []string) int {
	if _, ok := parseArgs(fs, args, 0); !ok {
		return exitUsage
	}
	list, err := e.c.ListSchedules(ctx)
	if err != nil {
		return e.fail(err)
	}
	e.showSchedules(list, "schedules")
	return 0
}

// scheduleCall is a command that calls one method on a schedule's id and shows it.
func scheduleCall(call func(*client.Client, context.Context, string) (*client.Schedule, error)) func(context.Context, *apiEnv, *flag.FlagSet, []string) int {
	return func(ctx context.Context, e *apiEnv, fs *flag.FlagSet, args []string) int {
		pos, ok := parseArgs(fs, args, 1)
		if !ok {
			return exitUsage
		}
		sc, err := call(e.c, ctx, pos[0])
		if err != nil {
			return e.fail(err)
		}
		e.showSchedules([]client.Schedule{*sc}, "schedule")
		return 0
	}
}

func schedulesRun(ctx context.Context, e *apiEnv, fs *flag.FlagSet, args []string) int {
	pos, ok := parseArgs(fs, args, 1)
	if !ok {
		return exitUsage
	}
	run, err := e.c.RunSchedule(ctx, pos[0])
	if err != nil {
		return e.fail(err)
	}
	if e.json {
		e.printJSON(map[string]any{"run": run})
	} else {
		e.showRuns([]client.ScheduleRun{*run})
	}
	if run.Outcome == "refused" || run.Outcome == "failed" {
		return exitRefused
	}
	return 0
}

func schedulesRuns(ctx context.Context, e *apiEnv, fs *flag.FlagSet, args []string) int {
	pos, ok := parseArgs(fs, args, 1)
	if !ok {
		return exitUsage
	}
	runs, err := e.c.ListScheduleRuns(ctx, pos[0])
	if err != nil {
		return e.fail(err)
	}
	if e.json {
		e.printJSON(map[string]any{"runs": runs})
		return 0
	}
	e.showRuns(runs)
	return 0
}

func schedulesDelete(ctx context.Context, e *apiEnv, fs *flag.FlagSet, args []string) int {
	pos, ok := parseArgs(fs, args, 1)
	if !ok {
		return exitUsage
	}
	if err := e.c.DeleteSchedule(ctx, pos[0]); err != nil {
		return e.fail(err)
	}
	if e.json {
		e.printJSON(map[string]any{"ok": true})
	}
	return 0
}

// showSchedules prints schedules as a table, or as JSON under key (one schedule:
// "schedule", as the API answers).
func (e *apiEnv) showSchedules(list []client.Schedule, key string) {
	if e.json {
		if key == "schedule" {
			e.printJSON(map[string]any{key: list[0]})
		} else {
			e.printJSON(map[string]any{key: list})
		}
		return
	}
	rows := make([][]string, len(list))
	for i, s := range list {
		state := "active"
		if s.Paused {
			state = "paused"
		}
		rows[i] = []string{s.ScheduleID, s.Name, s.Cron, s.TimeZone, s.Mode, state, s.NextTickAt.Time().UTC().Format(time.RFC3339)}
	}
	e.table("SCHEDULE\tNAME\tCRON\tZONE\tMODE\tSTATE\tNEXT TICK", rows)
}

func (e *apiEnv) showRuns(runs []client.ScheduleRun) {
	rows := make([][]string, len(runs))
	for i, r := range runs {
		why := r.Reason
		if r.Code != "" {
			why = r.Code + ": " + r.Reason
		}
		rows[i] = []string{r.Tick.Time().UTC().Format(time.RFC3339), r.Outcome, orDash(r.WorkspaceID), orDash(why)}
	}
	e.table("TICK\tOUTCOME\tWORKSPACE\tWHY", rows)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
