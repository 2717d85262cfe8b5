package postgres

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// checkDest holds a hand scan's destinations to its SELECT: the field of row each one
// points at carries the db tag of the column in its place, and every field is read.
func checkDest(t *testing.T, row any, dest []any, columns []string) {
	t.Helper()
	v := reflect.ValueOf(row).Elem()
	tagAt := map[uintptr]string{}
	for i := range v.NumField() {
		tagAt[v.Field(i).Addr().Pointer()] = v.Type().Field(i).Tag.Get("db")
	}
	var scanned []string
	for _, d := range dest {
		scanned = append(scanned, tagAt[reflect.ValueOf(d).Pointer()])
	}
	if !slices.Equal(scanned, columns) {
		t.Fatalf("dest scans\n %v\nthe SELECT reads\n %v", scanned, columns)
	}
	if len(scanned) != v.NumField() {
		t.Fatalf("dest scans %d columns; %s has %d fields", len(scanned), v.Type(), v.NumField())
	}
}

// selected lists the columns of alias in a SELECT list.
func selected(list, alias string) []string {
	var columns []string
	for _, m := range regexp.MustCompile(alias+`\.(\w+)`).FindAllStringSubmatch(list, -1) {
		columns = append(columns, m[1])
	}
	return columns
}

func TestWorkspaceScanMatchesItsSelect(t *testing.T) {
	head, _, _ := strings.Cut(workspaceSelect, "EXISTS")
	var r workspaceRow
	checkDest(t, &r, r.dest(), append(selected(head, "w"), "open_messages"))
}

func TestProjectScanMatchesItsColumns(t *testing.T) {
	var r projectRow
	checkDest(t, &r, r.dest(), selected(qualified(projectColumns, "p"), "p"))
}

func TestAccountScanMatchesItsColumns(t *testing.T) {
	var r accountRow
	checkDest(t, &r, r.dest(), selected(accountColumns, "a"))
}
