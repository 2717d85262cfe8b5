package browsertest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// Violation is one axe-core rule the page breaks, with the nodes that break it.
type Violation struct {
	ID      string          `json:"id"`     // the rule, e.g. "label", "color-contrast"
	Impact  string          `json:"impact"` // minor, moderate, serious or critical
	Help    string          `json:"help"`
	HelpURL string          `json:"helpUrl"`
	Nodes   []ViolationNode `json:"nodes"`
}

// ViolationNode is a node that breaks a rule.
type ViolationNode struct {
	// Target is the node's selector path (more than one part inside iframes and
	// shadow roots).
	Target         []any  `json:"target"`
	HTML           string `json:"html"`
	FailureSummary string `json:"failureSummary"`
}

// Axe checks the page in the tab, once it has loaded, with axe-core and fails the
// test, listing them, on violations of impact serious or critical: those that keep
// someone from using the page. The test is skipped when axe-core is not installed.
func (b *Browser) Axe(t testing.TB) {
	t.Helper()
	var failing []string
	for _, v := range b.AxeViolations(t) {
		if v.Impact != "serious" && v.Impact != "critical" {
			continue
		}
		var nodes strings.Builder
		for _, n := range v.Nodes {
			fmt.Fprintf(&nodes, "\n    %v: %s\n      %s", n.Target, n.HTML, strings.ReplaceAll(n.FailureSummary, "\n", "\n      "))
		}
		failing = append(failing, fmt.Sprintf("  %s (%s): %s <%s>%s", v.ID, v.Impact, v.Help, v.HelpURL, nodes.String()))
	}
	if len(failing) > 0 {
		// The same page can pass in one look and fail in another (a colour only the
		// dark scheme has, a layout only a phone's width has): the message says which.
		look := run(t, b, "read the page's look", chromedp.Evaluate[string](
			`innerWidth + "px, " + (matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light")`))
		t.Errorf("browsertest: axe-core finds %d serious or critical accessibility violation(s) on %s (%s):\n%s",
			len(failing), b.URL(t), look, strings.Join(failing, "\n"))
	}
}

// AxeViolations runs axe-core's default rules (WCAG 2 A and AA, and best practices)
// on the page in the tab, once it has loaded, and returns every violation, of any
// impact. It injects axe-core into the page first, through the DevTools protocol,
// which a page's Content-Security-Policy does not stop. The test is skipped when
// axe-core is not installed.
func (b *Browser) AxeViolations(t testing.TB) []Violation {
	t.Helper()
	src, err := axeSource()
	if missing := (*notInstalled)(nil); errors.As(err, &missing) {
		t.Skipf("browsertest: %v", err)
	}
	if err != nil {
		t.Fatalf("browsertest: axe-core: %v", err)
	}
	// A page still loading is checked as it will be: all of it, styled. (axe-core
	// on half a page finds what is not yet there, a button without its text or
	// colours before the styles.)
	b.do(t, "wait for the page to load before axe-core", pageLoaded)
	if !run(t, b, "look for axe-core", chromedp.Evaluate[bool](`typeof window.axe === "object"`)) {
		b.do(t, "inject axe-core", chromedp.Evaluate[chromedp.Void](src))
	}
	return run(t, b, "run axe-core", chromedp.Evaluate[[]Violation](`axe.run(document, {resultTypes: ["violations"]}).then(r =>
	r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, helpUrl: v.helpUrl,
		nodes: v.nodes.map(n => ({target: n.target, html: n.html, failureSummary: n.failureSummary}))})))`,
		chromedp.EvalAwaitPromise))
}
