package web_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/web"
)

// answer is a response of the app, read whole.
type answer struct {
	status int
	header http.Header
	body   string
}

func (a answer) String() string {
	return fmt.Sprintf("%d %s:\n%.600s", a.status, a.header.Get("Content-Type"), a.body)
}

// isPage reports whether the answer is a whole HTML page of the app.
func (a answer) isPage() bool {
	return strings.HasPrefix(a.header.Get("Content-Type"), "text/html") && strings.HasPrefix(a.body, "<!doctype html>") &&
		strings.HasSuffix(strings.TrimSpace(a.body), "</html>")
}

func (s *site) fetch(path string) answer {
	s.t.Helper()
	res, err := s.web.Get(s.hub.URL + path)
	if err != nil {
		s.t.Fatalf("GET %s: %v", path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return answer{status: res.StatusCode, header: res.Header, body: string(b)}
}

// headOnly sends a request's head on a connection of its own, never its body, and
// reads the answer: an answer at all shows the body was refused unread.
func headOnly(t *testing.T, h *hubtest.Hub, head string) answer {
	t.Helper()
	u, _ := url.Parse(h.URL)
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read the answer (did the hub wait for the body?): %v", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return answer{status: res.StatusCode, header: res.Header, body: string(b)}
}

// An address under /app that is no page answers the app's own page, saying which
// address it was, not the API's JSON.
func TestAnUnknownAppAddressIsAPageNamingIt(t *testing.T) {
	t.Parallel()
	s, _ := ownerSignedIn(t)
	for _, path := range []string{"/app/nope", "/app/workspaces/ws_x/nope"} {
		a := s.fetch(path)
		if a.status != http.StatusNotFound || !a.isPage() || !strings.Contains(noticeOf(a.body), "There is no page at "+path) {
			t.Errorf("GET %s: expected a 404 page naming the address, got %s", path, a)
		}
		if a.header.Get("Content-Security-Policy") == "" {
			t.Errorf("GET %s: expected the app's security headers on its error page, got %v", path, a.header)
		}
	}
}

// A body larger than its path takes is refused before it is read, in the words of
// the front-end the path belongs to: the app's forms with a page, its uploads (read
// by the page's script) with JSON, the API with api.md's codes.
func TestAnOversizedBodyIsRefusedUnreadInItsFrontEndsWords(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	u, _ := url.Parse(h.URL)
	head := func(path string, n int, lines ...string) string {
		return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n%sConnection: close\r\n\r\n",
			path, u.Host, n, strings.Join(append(lines, ""), "\r\n"))
	}
	form := headOnly(t, h, head("/app/keys", web.MaxFormBytes+1))
	if form.status != http.StatusRequestEntityTooLarge || !form.isPage() || !strings.Contains(noticeOf(form.body), "64 KiB") {
		t.Errorf("an oversized form: expected a 413 page saying the limit (64 KiB), got %s", form)
	}
	secrets := headOnly(t, h, head(web.ProjectsPrefix+"prj_x/secrets", web.MaxSecretFormBytes+1))
	if secrets.status != http.StatusRequestEntityTooLarge || !secrets.isPage() {
		t.Errorf("an oversized secrets form: expected a 413 page, got %s", secrets)
	}
	upload := headOnly(t, h, head(web.UploadPrefix+"ws_x", web.MaxUploadBytes+1))
	var said struct{ Error string }
	if err := json.Unmarshal([]byte(upload.body), &said); err != nil || upload.status != http.StatusRequestEntityTooLarge || !strings.Contains(said.Error, "20.0 MiB") {
		t.Errorf("an oversized upload: expected 413 with the limit in the JSON the page's script reads, got %s", upload)
	}
	ws := h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"agent": "agent_1", "model": "m"}).Expect(t, 201, "").
		Body["workspace"].(map[string]any)["workspaceId"].(string)
	api := headOnly(t, h, head("/v1/api/workspaces/"+ws+"/attachments", core.MaxAssetBytes+1, "Authorization: Bearer "+h.Key))
	var code struct{ Error string }
	if err := json.Unmarshal([]byte(api.body), &code); err != nil || api.status != http.StatusBadRequest || code.Error != core.CodeInvalidAssetSize {
		t.Errorf("an oversized API upload: expected 400 %s as api.md says, got %s", core.CodeInvalidAssetSize, api)
	}
}

// A page whose template fails halfway answers a whole error page with 500: it was
// rendered into a buffer, so none of the failed page reaches the browser.
func TestAPageThatFailsToRenderIsAWhole500Page(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	if err := s.hub.Web.BreakPage("keys"); err != nil {
		t.Fatal(err)
	}
	s.person("ada-1", "ada@example.com", "Ada", core.RoleOwner)
	s.signIn("ada-1")
	a := s.fetch("/app/keys")
	if a.status != http.StatusInternalServerError || !a.isPage() || strings.Contains(a.body, "half a page") ||
		!strings.Contains(noticeOf(a.body), "Something went wrong on the hub") {
		t.Fatalf("expected a whole 500 page and nothing of the broken one, got %s", a)
	}
}

// A signed-in person's requests are bounded by the buckets that bound the API's
// keys (WSHUB_API_RATE, WSHUB_API_BURST): past the burst, a 429 page with
// Retry-After. The person's bucket is their own: the account's key still works.
func TestAPersonsRequestsAreBoundedAsAKeysAre(t *testing.T) {
	t.Parallel()
	s := newSite(t, hubtest.WithConfig(func(c *hub.Config) { c.APIRate, c.APIBurst = 0.01, 4 }))
	s.person("ada-1", "ada@example.com", "Ada", core.RoleOwner)
	s.signIn("ada-1") // lands on /app/ and then /app/workspaces: two of the four
	var last answer
	for range 3 {
		if last = s.fetch("/app/keys"); last.status == http.StatusTooManyRequests {
			break
		}
	}
	if last.status != http.StatusTooManyRequests || !last.isPage() || last.header.Get("Retry-After") == "" {
		t.Fatalf("expected the third page past the burst of 4 refused with a 429 page and Retry-After, got %s", last)
	}
	s.hub.Call("GET", "/v1/api/workspaces", s.hub.Key, nil).Expect(t, 200, "")
}
