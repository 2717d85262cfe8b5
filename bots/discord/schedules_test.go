package discord_test

import (
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
)

// Discord's one slash command is /workspace; the other chat commands, the schedule
// ones among them, reach the bot as mentions through the gateway, as on Slack. In a
// bound channel with a project: a schedule is made, listed and deleted, each audited
// as the channel's.
func TestScheduleCommandsByMention(t *testing.T) {
	t.Parallel()
	f := newFakeDiscord(t)
	h := discordHub(t, f, nil)
	say := func(id, text string, n int, what string) string {
		t.Helper()
		f.dispatch("MESSAGE_CREATE", messageCreate(id, channel, "<@"+botID+"> "+text, true))
		return f.waitPosts(t, channel, what, func(p []post) bool { return len(p) >= n })[n-1].Content
	}
	say("962000000000000001", "use "+h.Project.ID, 1, "the project set")
	made := say("962000000000000002", "schedule 0 9 * * 1 in Europe/Paris: update the deps", 2, "the schedule made")
	if !strings.HasPrefix(made, "Scheduled `sch_") || !strings.Contains(made, "`0 9 * * 1` in Europe/Paris") {
		t.Fatalf("expected the schedule made and described, got %q", made)
	}
	list := h.Call("GET", "/v1/api/schedules", h.Key, nil).Expect(t, 200, "").Body["schedules"].([]any)
	if len(list) != 1 {
		t.Fatalf("expected one schedule, got %d", len(list))
	}
	sc := list[0].(map[string]any)
	if sc["projectId"] != h.Project.ID || sc["agent"] != "agent_1" || sc["prompt"] != "update the deps" {
		t.Errorf("expected the schedule on the channel's project with the binding's agent, got %v", sc)
	}
	id := sc["scheduleId"].(string)
	if listed := say("962000000000000003", "schedules", 3, "the list"); !strings.Contains(listed, "`"+id+"`") {
		t.Errorf("expected %s listed, got %q", id, listed)
	}
	if gone := say("962000000000000004", "schedule delete "+id, 4, "the delete"); !strings.HasPrefix(gone, "Deleted `"+id+"`") {
		t.Errorf("expected %s deleted and said, got %q", id, gone)
	}
	h.Call("GET", "/v1/api/schedules/"+id, h.Key, nil).Expect(t, 404, "schedule_not_found")
	var actors []string
	if err := h.PG().DB().Select(&actors, `SELECT actor FROM audit_log WHERE target = $1 AND action IN ($2, $3) ORDER BY id`,
		id, core.AuditScheduleCreated, core.AuditScheduleDeleted); err != nil || len(actors) != 2 ||
		actors[0] != core.PlatformDiscord+":"+channel || actors[1] != actors[0] {
		t.Errorf("expected the making and the delete audited as the channel's, got %q (%v)", actors, err)
	}
}
