package httpfront_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/internal/httpfront"
)

// serve runs srv on a loopback port until the test ends and returns its base URL.
func serve(t *testing.T, srv *httpfront.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.App.Listener(httpfront.Listener(ln)) }()
	t.Cleanup(func() { _ = srv.App.Shutdown() })
	return "http://" + ln.Addr().String()
}

// front is a front-end that answers every error "<name> <status>".
func front(name string, prefixes []string, limits map[string]int) httpfront.Front {
	return httpfront.Front{Prefixes: prefixes, BodyLimits: limits,
		HandleError: func(c *fiber.Ctx, err error) error {
			code := fiber.StatusInternalServerError
			if fe := (*fiber.Error)(nil); errors.As(err, &fe) {
				code = fe.Code
			}
			return c.Status(code).SendString(fmt.Sprintf("%s %d", name, code))
		},
		Mount: func(r fiber.Router) {
			r.Post(strings.TrimSuffix(prefixes[0], "/")+"/form", func(c *fiber.Ctx) error { return c.SendString(name + " took it") })
		}}
}

// Each error goes to the front-end owning the path, the longest prefix winning, and
// a prefix owns its path and what is under it, not names that merely begin with it;
// a body is held to the longest prefix's limit, whichever front-end declared it.
func TestErrorsAndLimitsGoByTheLongestPrefix(t *testing.T) {
	t.Parallel()
	srv := httpfront.New(httpfront.Options{})
	srv.Add(front("root", []string{"/"}, map[string]int{"/": 100}))
	srv.Add(front("app", []string{"/app/"}, map[string]int{"/app/": 10, "/app/big/": 1000}))
	base := serve(t, srv)
	for _, c := range []struct {
		method, path string
		body         int
		want         string
	}{
		{"GET", "/nope", 0, "root 404"},
		{"GET", "/app", 0, "app 404"},
		{"GET", "/app/nope", 0, "app 404"},
		{"GET", "/apple", 0, "root 404"},
		{"POST", "/form", 100, "root took it"},
		{"POST", "/form", 101, "root 413"},
		{"POST", "/app/form", 10, "app took it"},
		{"POST", "/app/form", 11, "app 413"},
		{"POST", "/app/big/x", 1000, "app 404"},
		{"POST", "/app/big/x", 1001, "app 413"},
	} {
		req, _ := http.NewRequest(c.method, base+c.path, strings.NewReader(strings.Repeat("x", c.body)))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if string(b) != c.want {
			t.Errorf("%s %s with %d bytes: expected %q, got %d %q", c.method, c.path, c.body, c.want, res.StatusCode, b)
		}
	}
}
