package web

// BreakPage redefines the page name as a template that writes the top of a page and
// then fails, as a page with a bug in its template would. Call it before the hub
// renders any page: templates cannot change once one has run.
func (w *App) BreakPage(name string) error {
	_, err := w.a.pages.New(name).Parse(`{{template "top" .}}<p>half a page</p>{{index .Data 99}}{{template "bottom" .}}`)
	return err
}
