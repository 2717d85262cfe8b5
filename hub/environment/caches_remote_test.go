package environment_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/wshub/wshub/api/runtimewire"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
)

// cachedEnv fills deps/ unless the cache brought it, and says which.
const cachedEnv = `{"setup": "if [ -e deps/done ]; then echo found deps; else mkdir -p deps && echo x > deps/done && echo made deps; fi",
	"cache": [{"paths": ["deps"], "keyFiles": ["deps.lock"]}]}`

// withCaches keeps up to 1 GiB of caches a project (test hubs keep none).
var withCaches = hubtest.WithConfig(func(c *hub.Config) { c.CacheMaxBytes = 1 << 30 })

// On a remote machine the second workspace restores what the first one's setup saved:
// the machine downloads and uploads the archive over the runtime API, in parts.
func TestARemoteMachinesSecondWorkspaceFindsTheCache(t *testing.T) {
	t.Parallel()
	h := startHub(t, hubtest.WithProcessProvider(t), withCaches)
	p, _ := repoWith(t, h, map[string]string{".wshub/environment.json": cachedEnv, "deps.lock": "v1\n"})
	first := create(t, h, p, "ls deps", "providerId", "process")
	waitFor(t, h, first, "the first workspace's turn", idleAfterTurns(1))
	out := setupOutput(events(t, h, first))
	if !strings.Contains(out, "made deps\n") || !strings.Contains(out, "cache deps: saved 1 files") {
		t.Fatalf("the first setup fills the cache and saves it: %q", out)
	}
	second := create(t, h, p, "ls deps", "providerId", "process")
	waitFor(t, h, second, "the second workspace's turn", idleAfterTurns(1))
	out = setupOutput(events(t, h, second))
	if !strings.Contains(out, "cache deps: restored 1 files") || !strings.Contains(out, "found deps\n") || strings.Contains(out, "saved") {
		t.Errorf("the second setup finds the cache and saves nothing: %q", out)
	}
	if got := reply(t, h, second, 2); got != "done" {
		t.Errorf("the agent sees the restored files: %q", got)
	}
	list, err := h.Service.Caches.List(context.Background(), p.ID)
	if err != nil || len(list) != 1 || list[0].Parts != 1 {
		t.Errorf("one cache saved, in one part: %+v %v", list, err)
	}
}

// A machine may upload only its running setup's caches: not another run's, not one
// the setup restored, not past the cap, and nothing once the setup has ended.
func TestARemoteMachineUploadsCachesOnlyWhileItsSetupRuns(t *testing.T) {
	t.Parallel()
	h := startHub(t, hubtest.WithFakeMachine(t), withCaches)
	p, _ := repoWith(t, h, map[string]string{".wshub/environment.json": cachedEnv, "deps.lock": "v1\n"})
	id := create(t, h, p, "", "providerId", "process")
	token := h.MachineToken(t, id)
	var env runtimewire.Script
	call := func(method, path string, body []byte) int {
		req, _ := http.NewRequest(method, h.URL+runtimewire.Prefix+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set(runtimewire.SessionHeader, "session-0001")
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if path == "/environment" {
			var sc runtimewire.Script
			if err := json.NewDecoder(res.Body).Decode(&sc); err != nil {
				t.Fatal(err)
			}
			env = sc
		}
		return res.StatusCode
	}
	if code := call("POST", "/hello", nil); code != 200 {
		t.Fatalf("hello: %d", code)
	}
	if code := call("POST", "/environment", nil); code != 200 || len(env.Caches) != 1 || !env.Caches[0].Save {
		t.Fatalf("the setup with one cache to save: %d %+v", code, env)
	}
	run := "/scripts/" + env.RunID + "/caches/0"
	if code := call("PUT", run+"/parts/0", []byte("part")); code != 204 {
		t.Errorf("a part of the running setup's cache: %d", code)
	}
	for _, c := range []struct{ method, path, why string }{
		{"PUT", "/scripts/setup_0000000000000000/caches/0/parts/0", "another run's"},
		{"PUT", run + "/parts/999999", "past the cap"},
		{"PUT", "/scripts/" + env.RunID + "/caches/1/parts/0", "a cache the setup has not"},
	} {
		if code := call(c.method, c.path, []byte("part")); code != 400 {
			t.Errorf("%s: %d, want 400", c.why, code)
		}
	}
	end, _ := json.Marshal(runtimewire.ScriptEnd{Outcome: "completed", Lines: 0})
	if code := call("POST", "/scripts/"+env.RunID+"/end", end); code != 204 {
		t.Fatalf("end: %d", code)
	}
	if code := call("PUT", run+"/parts/1", []byte("part")); code != 400 {
		t.Errorf("a part after the setup ended: %d, want 400", code)
	}
	saved, _ := json.Marshal(runtimewire.CacheSaved{Parts: 1, Bytes: 4, Files: 1})
	if code := call("POST", run, saved); code != 400 {
		t.Errorf("a cache recorded after the setup ended: %d, want 400", code)
	}
	if list, _ := h.Service.Caches.List(context.Background(), p.ID); len(list) != 0 {
		t.Errorf("nothing is saved: %+v", list)
	}
}
