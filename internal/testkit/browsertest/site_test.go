package browsertest_test

import (
	"html/template"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// The pages the tests browse: small, but real HTML over real HTTP on loopback.

const accessiblePage = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign up</title>
<style>
body { font-family: sans-serif; margin: 2rem; }
form { display: grid; gap: .5rem; max-width: 30rem; }
@media (max-width: 600px) { body { margin: .5rem; } }
</style></head>
<body><main>
<h1>Sign up</h1>
<form method="post" action="/signup">
<label for="name">Your name</label>
<input id="name" name="name" autocomplete="name" required>
<label>Email <input id="email" name="email" type="email" autocomplete="email" required></label>
<button type="submit">Sign up</button>
</form>
</main></body>
</html>`

// The input has no label and the grey text on white is 2.3:1, below WCAG's 4.5:1.
const inaccessiblePage = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Search</title></head>
<body><main>
<h1>Search</h1>
<p style="color: #aaaaaa; background: #ffffff">Type a word and press enter.</p>
<input id="q" name="q">
</main></body>
</html>`

// The button asks the server for a greeting and shows it: the page's own script at
// work, on its own time.
const scriptedPage = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Greeting</title></head>
<body><main>
<h1>Greeting</h1>
<button id="greet" type="button">Greet me</button>
<div id="out"></div>
<script>
document.getElementById("greet").addEventListener("click", async () => {
	const r = await fetch("/api/greeting");
	const p = document.createElement("p");
	p.id = "greeting";
	p.textContent = await r.text();
	document.getElementById("out").append(p);
});
</script>
</main></body>
</html>`

// The page goes on to /welcome by itself, once its script has asked the server.
const movingPage = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Moving</title></head>
<body><main><h1>One moment</h1>
<script>fetch("/api/greeting").then(() => location.assign("/welcome"));</script>
</main></body>
</html>`

// In the dark scheme the note is grey on near-black, 2.2:1, which fails axe-core's
// contrast check; the light scheme's is black on white. The table is 500px wide
// whatever the window.
const themedPage = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Themed</title>
<style>
body { color: #000; background: #fff; }
@media (prefers-color-scheme: dark) { body { color: #555; background: #111; } }
table { width: 500px; }
</style></head>
<body><main><h1>Themed</h1><p>A note.</p>
<table id="wide"><caption>Wide</caption><tr><th scope="col">A</th></tr><tr><td>1</td></tr></table>
</main></body>
</html>`

var welcomePage = template.Must(template.New("welcome").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Welcome</title></head>
<body><main><h1>Welcome, {{.}}</h1></main></body>
</html>`))

// site serves the pages on loopback. POST /signup keeps the name in an HttpOnly
// cookie and redirects to /welcome, which greets whoever the cookie names.
func site(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	page := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, body)
		}
	}
	mux.Handle("GET /accessible", page(accessiblePage))
	mux.Handle("GET /inaccessible", page(inaccessiblePage))
	mux.Handle("GET /scripted", page(scriptedPage))
	mux.Handle("GET /moving", page(movingPage))
	mux.Handle("GET /themed", page(themedPage))
	mux.HandleFunc("GET /api/greeting", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "Hello from the server")
	})
	mux.HandleFunc("POST /signup", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{
			Name: "visitor", Value: r.PostFormValue("name"), Path: "/",
			HttpOnly: true, SameSite: http.SameSiteLaxMode,
		})
		http.Redirect(w, r, "/welcome", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /welcome", func(w http.ResponseWriter, r *http.Request) {
		name := "stranger"
		if c, err := r.Cookie("visitor"); err == nil {
			name = c.Value
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		welcomePage.Execute(w, name)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}
