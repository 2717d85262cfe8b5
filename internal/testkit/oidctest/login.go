package oidctest

import (
	"context"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
)

// loginPath is the provider's login step, where the op sends the browser with the
// auth request's ID.
const loginPath = "/login"

func loginURL(authRequestID string) string {
	return loginPath + "?" + url.Values{"authRequestID": {authRequestID}}.Encode()
}

// loginPage stands in for the provider's sign-in: no password, the test decides who
// signs in (SignInAs), or a browser test clicks a user on the page.
type loginPage struct {
	store    *storage
	accounts *accounts
	// callback is the op's URL to send the browser back to once the user is known.
	callback func(ctx context.Context, authRequestID string) string
}

var pickerPage = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in to the test provider</title></head>
<body>
<main>
<h1>Sign in to the test provider</h1>
<form method="post" action="{{.Action}}">
<input type="hidden" name="authRequestID" value="{{.ID}}">
{{range .Users}}<p><button type="submit" name="subject" value="{{.Subject}}">Sign in as {{if .Name}}{{.Name}}{{else}}{{.Subject}}{{end}}{{with .Email}} ({{.}}){{end}}</button></p>
{{else}}<p>No users: the test adds them with AddUser.</p>
{{end}}</form>
</main>
</body>
</html>
`))

func (l *loginPage) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.FormValue("authRequestID")
	switch {
	case r.Method == http.MethodPost:
		l.finish(w, r, id, r.PostFormValue("subject"))
	case r.Method != http.MethodGet:
		http.Error(w, "GET or POST", http.StatusMethodNotAllowed)
	case l.accounts.signedIn() != "":
		l.finish(w, r, id, l.accounts.signedIn())
	default:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		err := pickerPage.Execute(w, struct {
			Action, ID string
			Users      []User
		}{loginPath, id, l.accounts.list()})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	}
}

// finish signs subject in for the auth request and sends the browser on to the op,
// which redirects it to the client with the code.
func (l *loginPage) finish(w http.ResponseWriter, r *http.Request, authRequestID, subject string) {
	if _, ok := l.accounts.user(subject); !ok {
		http.Error(w, "oidctest: no user with subject "+strconv.Quote(subject)+" (AddUser first)", http.StatusBadRequest)
		return
	}
	if err := l.store.finishLogin(authRequestID, subject); err != nil {
		http.Error(w, "oidctest: "+err.Error(), http.StatusBadRequest)
		return
	}
	// 303: the browser follows a POST's answer with a GET.
	http.Redirect(w, r, l.callback(r.Context(), authRequestID), http.StatusSeeOther)
}
