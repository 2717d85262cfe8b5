package web_test

import (
	"encoding/csv"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// usageRow is a table's row on the usage page, its cells joined by " | ".
func usageRow(t *testing.T, page, caption, name string) string {
	t.Helper()
	table := regexp.MustCompile(`(?s)<caption>` + caption + `</caption>.*?</table>`).FindString(page)
	for _, tr := range regexp.MustCompile(`(?s)<tr>(.*?)</tr>`).FindAllStringSubmatch(table, -1) {
		var cells []string
		for _, td := range regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`).FindAllStringSubmatch(tr[1], -1) {
			cells = append(cells, td[1])
		}
		if len(cells) > 0 && cells[0] == name {
			return strings.Join(cells, " | ")
		}
	}
	t.Fatalf("expected a row for %s in %q:\n%s", name, caption, table)
	return ""
}

// The usage page counts the turns the hub ran, per member, project and agent, names
// each for people, and exports the same rows as CSV; another account's work is in
// neither, and members are refused both.
func TestOwnersSeeTheAccountsUsageAndExportIt(t *testing.T) {
	s := workingSite(t)
	s.person("ada-1", "ada@example.com", "Ada", core.RoleOwner)
	s.person("mal-1", "mal@example.com", "=HYPERLINK(\"http://x\")", core.RoleMember)
	s.signIn("ada-1")
	code, _, page := s.get("/app/usage")
	if code != 200 || !strings.Contains(page, "No workspace was started and no turn ran") || !strings.Contains(page, "Nothing in the last 30 days.") {
		t.Fatalf("expected the empty page in words before any work, got %d:\n%s", code, page)
	}
	s.signIn("mal-1")
	if _, _, page = s.get("/app/workspaces"); strings.Contains(page, `href="/app/usage"`) {
		t.Errorf("a member's page links to the usage page:\n%s", page)
	}
	for _, path := range []string{"/app/usage", "/app/usage.csv"} {
		if code, _, body := s.get(path); code != 403 || !strings.Contains(body, "only the account") {
			t.Errorf("%s: expected a member refused with the app's page, got %d:\n%s", path, code, body)
		}
	}
	mals := s.start("say hi")
	s.waitPage("/app/workspaces/"+mals, "echo: say hi")

	// Another account's workspace, run to its end, on a project of its own.
	other, key := s.hub.NewAccount(true)
	theirs := s.hub.NewProject(other.ID, hubtest.GitRepo(t))
	id := s.hub.Call("POST", "/v1/api/workspaces", key, map[string]any{"projectId": theirs.ID, "agent": "agent_1",
		"model": "test-model", "prompt": "fail now"}).Expect(t, 201, "").Body["workspace"].(map[string]any)["workspaceId"].(string)
	eventually.Eventually(t, time.Minute, "the other account's turn", func() bool {
		ws, _ := s.hub.Call("GET", "/v1/api/workspaces/"+id, key, nil).Body["workspace"].(map[string]any)
		return ws["lastTurn"] != nil
	})

	s.signIn("ada-1")
	failed := s.start("fail now")
	s.waitPage("/app/workspaces/"+failed, "The turn failed (")
	fine := s.start("say hello")
	s.waitPage("/app/workspaces/"+fine, "echo: say hello")

	_, _, page = s.get("/app/workspaces")
	if !strings.Contains(page, `<a href="/app/usage">Usage</a>`) {
		t.Errorf("expected the owner's navigation to link the usage page:\n%s", page)
	}
	_, _, page = s.get("/app/usage")
	for _, want := range []struct{ caption, name, row string }{
		{"Per member", "Ada", "Ada | 2 | 2 | 0 s | 1"},
		{"Per member", "=HYPERLINK(&#34;http://x&#34;)", "=HYPERLINK(&#34;http://x&#34;) | 1 | 1 | 0 s | 0"},
		{"Per project", s.hub.Project.DisplayName, s.hub.Project.DisplayName + " | 3 | 3 | 0 s | 1"},
		{"Per agent", "Claude Code (agent_1)", "Claude Code (agent_1) | 3 | 3 | 0 s | 1"},
	} {
		if got := usageRow(t, page, want.caption, want.name); got != want.row {
			t.Errorf("%s: expected %q, got %q", want.caption, want.row, got)
		}
	}
	// The other account's project has the same name ("repo"): the counts above, and no
	// row for its key, say its work is not here.
	if strings.Contains(page, "(API key)") || strings.Contains(page, "No workspace was started") {
		t.Errorf("expected Ada's account's work only, and no empty notice:\n%s", page)
	}

	res, err := s.web.Get(s.hub.URL + "/app/usage.csv")
	if err != nil {
		t.Fatal(err)
	}
	code, _, body := read(t, res)
	if code != 200 || res.Header.Get("Content-Type") != "text/csv; charset=utf-8" ||
		!strings.HasPrefix(res.Header.Get("Content-Disposition"), `attachment; filename="usage-`) {
		t.Fatalf("expected a CSV attachment, got %d %q %q", code, res.Header.Get("Content-Type"), res.Header.Get("Content-Disposition"))
	}
	records, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatalf("expected CSV, got %v:\n%s", err, body)
	}
	var got []string
	for _, r := range records {
		if r[0] != "dimension" {
			r[1] = "" // ids: the names say which
		}
		got = append(got, strings.Join(r, ","))
	}
	want := []string{
		"dimension,key,name,workspaces,turns,agent_seconds,failures",
		"member,,Ada,2,2,0.000,1",
		`member,,'=HYPERLINK("http://x"),1,1,0.000,0`,
		"project,," + s.hub.Project.DisplayName + ",3,3,0.000,1",
		"agent,,Claude Code (agent_1),3,3,0.000,1",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("expected the rows\n%q\ngot\n%q", want, got)
	}
	if strings.Contains(body, theirs.ID) || strings.Contains(body, other.ID) {
		t.Errorf("expected no trace of the other account in the CSV:\n%s", body)
	}
}
