package main

import (
	"strings"
	"testing"
)

func TestServeRefusesProvidersThatNeedLinuxElsewhereSayingWhatToDoInstead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		goos      string
		providers []string
		// want are words the refusal must hold; none: the hub may start.
		want []string
	}{
		{"linux", nil, nil},
		{"linux", []string{"local", "process", "kubernetes"}, nil},
		{"darwin", nil, []string{"local provider", "needs Linux (bubblewrap, namespaces, cgroups)", "darwin", "docker compose up", "compose.yaml", "WSHUB_PROVIDERS=kubernetes"}},
		{"darwin", []string{"local"}, []string{"local provider", "needs Linux"}},
		{"darwin", []string{"kubernetes", " process"}, []string{"process provider", "needs Linux", "WSHUB_PROVIDERS=kubernetes"}},
		{"darwin", []string{"kubernetes"}, nil},
		{"windows", []string{"kubernetes"}, []string{"needs Linux or macOS", "windows", "docker compose up", "WSL2"}},
		{"windows", nil, []string{"WSL2", "compose.yaml"}},
	} {
		err := checkProviderOS(tc.goos, tc.providers)
		if len(tc.want) == 0 {
			if err != nil {
				t.Errorf("%s with %q: want the hub to start, got %v", tc.goos, tc.providers, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s with %q: want a refusal naming %q, got none", tc.goos, tc.providers, tc.want)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s with %q: the refusal should say %q; it says %q", tc.goos, tc.providers, w, err)
			}
		}
	}
}
