package main

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The operator commands' output types list their fields in the order of their JSON
// names: the order the output had when it was made of maps, which scripts comparing
// outputs may rely on. A field added out of place fails here.
func TestAdminOutputFieldsInJSONOrder(t *testing.T) {
	t.Parallel()
	for _, v := range []any{accountCreated{}, accountOut{}, keyCreated{}, keyOut{}, keyRevoked{}, projectAdded{}, projectOut{},
		projectRemoved{}, workspaceOut{}, deliveryOut{}, attemptOut{}, slackBound{}, discordBound{}, resealed{}, secretOut{}, secretRemoved{}} {
		typ := reflect.TypeOf(v)
		var names []string
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			names = append(names, name)
		}
		if !slices.IsSorted(names) {
			t.Errorf("%s: expected its fields in the order of their JSON names, got %v", typ.Name(), names)
		}
	}
}
