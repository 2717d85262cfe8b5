package webhooks_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
)

// forgeRepo is the repository of the forge projects these tests add: nothing is
// fetched from it, the deliveries only name it.
const forgeRepo = "https://forge.example.org/team/app.git"

// forgeProject adds a project of kind on forgeRepo taking forge events signed with
// secret; it is not prepared (deliveries are taken before any workspace needs it).
func forgeProject(t *testing.T, h *hubtest.Hub, kind, secret string) *core.Project {
	t.Helper()
	ctx := context.Background()
	p, err := h.Service.Admin.AddProject(ctx, core.AddProjectInput{AccountID: h.Account.ID, Repository: forgeRepo,
		Forge: core.ProjectForgeInput{Forge: &kind}})
	if err != nil {
		t.Fatal(err)
	}
	setSecret(t, h, p, secret)
	return p
}

// setSecret has p take forge events signed with secret.
func setSecret(t *testing.T, h *hubtest.Hub, p *core.Project, secret string) {
	t.Helper()
	if _, err := h.Service.ForgeAdmin.SetForgeEvents(context.Background(), p.ID, core.ForgeEventsInput{Secret: &secret}); err != nil {
		t.Fatal(err)
	}
}

// deliver posts body to the hub's path with headers (name, value, ...) and returns the
// answer's status.
func deliver(t *testing.T, h *hubtest.Hub, path string, body []byte, headers ...string) int {
	t.Helper()
	req, err := http.NewRequest("POST", h.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// hexMAC is body's HMAC-SHA256 under secret, in hex: Gitea's and GitHub's signature.
func hexMAC(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// delivery is one delivery to a forge's endpoint: what is sent, and what comes of it.
type delivery struct {
	what    string
	body    []byte
	headers []string
	// status is the answer's; stored the deliveries of the forge kept after it.
	status, stored int
}

// checkDeliveries makes each delivery to kind's endpoint in turn, checking its answer
// and how many deliveries are stored after it.
func checkDeliveries(t *testing.T, h *hubtest.Hub, kind string, ds []delivery) {
	t.Helper()
	for _, d := range ds {
		if got := deliver(t, h, "/forge/"+kind+"/events", d.body, d.headers...); got != d.status {
			t.Errorf("%s: expected %d, got %d", d.what, d.status, got)
		}
		if got := inboxRows(t, h, kind); got != d.stored {
			t.Errorf("%s: expected %d deliveries stored, got %d", d.what, d.stored, got)
		}
	}
}

// inboxRows counts the stored deliveries of a forge kind.
func inboxRows(t *testing.T, h *hubtest.Hub, kind string) int {
	t.Helper()
	var n int
	if err := h.PG().DB().QueryRowContext(context.Background(), `SELECT count(*) FROM chat_inbox WHERE platform = $1`, kind).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// unknownCounted reports whether the hub counted n deliveries for unknown repositories
// of kind.
func unknownCounted(t *testing.T, h *hubtest.Hub, kind string, n int) bool {
	t.Helper()
	return metricCounted(t, h, "wshub_forge_events_unknown_repository_total", kind, n)
}

// metricCounted reports whether the hub's counter name of forge kind is n.
func metricCounted(t *testing.T, h *hubtest.Hub, name, kind string, n int) bool {
	t.Helper()
	resp, err := http.Get(h.MetricsURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return strings.Contains(string(raw), name+`{forge="`+kind+`"} `+strconv.Itoa(n)+"\n")
}

// A Gitea delivery is verified by its project's secret before it is stored: a bad or
// missing signature is 401 and stores nothing; a redelivery (the same X-Gitea-Delivery)
// is 200 and stores nothing more; a repository no project has is 200, ignored and
// counted; the repository is matched whatever URL form the payload gives; a body over
// the bound is refused; once the project's events are off, its repository is unknown.
func TestGiteaDeliveriesAreVerifiedDeduplicatedAndBounded(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t, withForgeEvents())
	const secret = "s3cret"
	p := forgeProject(t, h, core.ForgeGitea, secret)
	comment := func(repo string) []byte {
		return []byte(`{"action":"created","issue":{"number":7,"title":"t","body":"b"},"comment":{"id":1,"body":"@wshub hi",` +
			`"user":{"login":"ann"}},"repository":{"ssh_url":"` + repo + `"},"is_pull":false}`)
	}
	body := comment("git@forge.example.org:team/app.git") // the ssh form of forgeRepo
	headers := func(id, sig string) []string {
		return []string{"X-Gitea-Delivery", id, "X-Gitea-Event", "issue_comment", "X-Gitea-Signature", sig}
	}
	checkDeliveries(t, h, core.ForgeGitea, []delivery{
		{"a bad signature", body, headers("d-1", hexMAC("other", body)), 401, 0},
		{"no signature", body, headers("d-1", ""), 401, 0},
		{"a signature of another body", body, headers("d-1", hexMAC(secret, comment("x"))), 401, 0},
		{"a signed delivery", body, headers("d-1", hexMAC(secret, body)), 202, 1},
		{"its redelivery", body, headers("d-1", hexMAC(secret, body)), 200, 1},
		{"another delivery", body, headers("d-2", hexMAC(secret, body)), 202, 2},
		{"no delivery id", body, headers("", hexMAC(secret, body)), 400, 2},
		{"an unknown repository", comment("https://forge.example.org/team/other"), headers("d-3", "x"), 200, 2},
		{"a body over the bound", bytes.Repeat([]byte(" "), 1<<20+1), headers("d-4", "x"), 413, 2},
	})
	if !unknownCounted(t, h, core.ForgeGitea, 1) {
		t.Error("expected the unknown repository's delivery counted once")
	}
	// Events turned off: the repository is no project's any more.
	if _, err := h.Service.ForgeAdmin.SetForgeEvents(context.Background(), p.ID, core.ForgeEventsInput{Off: true}); err != nil {
		t.Fatal(err)
	}
	checkDeliveries(t, h, core.ForgeGitea, []delivery{{"a delivery once off", body, headers("d-5", hexMAC(secret, body)), 200, 2}})
	if !unknownCounted(t, h, core.ForgeGitea, 2) {
		t.Error("expected the delivery once off counted as an unknown repository's")
	}
}
