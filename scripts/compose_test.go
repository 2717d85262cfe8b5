package scripts_test

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// composeFile is the development hub in Docker of the README's "On macOS or Windows".
const composeFile = "../compose.yaml"

// The compose file is one Docker Compose takes (docker compose config where Docker
// has the compose plugin, else a strict decode into the part of the Compose
// Specification the file may use), and its hub is one this hub's code runs: every setting it gives the hub
// is one the hub reads, the published port reaches the address the hub listens on,
// and the health check asks that address.
func TestComposeFileRunsAHubDockerComposeAccepts(t *testing.T) {
	raw, err := os.ReadFile(composeFile)
	if err != nil {
		t.Fatalf("the compose file of the README's \"On macOS or Windows\": %v", err)
	}
	if out, err := exec.Command("docker", "compose", "version").CombinedOutput(); err == nil {
		cmd := exec.Command("docker", "compose", "-f", composeFile, "config", "-q")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("docker compose config: %v: %s", err, out)
		}
	} else {
		t.Logf("docker compose is not here (%s); the file is checked against the part of the Compose Specification it may use", bytes.TrimSpace(out))
	}
	if err := strictCompose(raw); err != nil {
		t.Errorf("compose.yaml: %v", err)
	}
	// The check itself: a file Compose would refuse is refused here too.
	bad := bytes.Replace(raw, []byte("\n  hub:\n    build:"), []byte("\n  hub:\n    bulid:"), 1)
	if bytes.Equal(bad, raw) {
		t.Fatal("the hub service's build: was not found to plant a misspelling in")
	}
	if err := strictCompose(bad); err == nil {
		t.Error("a hub service with a misspelt key (bulid) passed: the check checks nothing")
	}

	var file struct {
		Services map[string]struct {
			Command     []string          `yaml:"command"`
			NetworkMode string            `yaml:"network_mode"`
			Ports       []string          `yaml:"ports"`
			Environment map[string]string `yaml:"environment"`
			DependsOn   map[string]struct {
				Condition string `yaml:"condition"`
			} `yaml:"depends_on"`
			Healthcheck struct {
				Test []string `yaml:"test"`
			} `yaml:"healthcheck"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	hub, port := file.Services["hub"], file.Services["port"]
	if !slices.Equal(hub.Command, []string{"dev"}) {
		t.Errorf("the hub runs %q, want [dev]: the development account, key and sign-in link", hub.Command)
	}
	if c := hub.DependsOn["postgres"].Condition; c != "service_healthy" {
		t.Errorf("the hub waits for postgres to be %q, want service_healthy", c)
	}
	if !strings.Contains(hub.Environment["DATABASE_URL"], "@postgres:5432/") {
		t.Errorf("DATABASE_URL %q does not name the postgres service", hub.Environment["DATABASE_URL"])
	}

	read := hubSettings(t)
	for name := range hub.Environment {
		if !read[name] {
			t.Errorf("the hub service sets %s, which the hub never reads (hub/config.go, cmd/wshub)", name)
		}
	}

	// The hub listens on the shared network's loopback; socat forwards the published
	// port to it; the health check asks it.
	host, hubPort, err := net.SplitHostPort(hub.Environment["WSHUB_ADDR"])
	if err != nil || host != "127.0.0.1" {
		t.Fatalf("WSHUB_ADDR %q: want 127.0.0.1:PORT (the development sign-in link is for loopback), err %v", hub.Environment["WSHUB_ADDR"], err)
	}
	if hub.NetworkMode != "service:port" {
		t.Errorf("the hub's network_mode is %q, want service:port (the forwarder's network)", hub.NetworkMode)
	}
	if len(port.Ports) != 1 {
		t.Fatalf("the port service publishes %q, want one port", port.Ports)
	}
	published := strings.Split(port.Ports[0], ":")
	if len(published) != 3 || published[0] != "127.0.0.1" {
		t.Fatalf("the port service publishes %q, want 127.0.0.1:HOST:CONTAINER (this machine only)", port.Ports[0])
	}
	if want := []string{"TCP-LISTEN:" + published[2] + ",fork,reuseaddr", "TCP:127.0.0.1:" + hubPort}; !slices.Equal(port.Command, want) {
		t.Errorf("socat runs %q, want %q: from the published port to the hub's", port.Command, want)
	}
	if published[1] != hubPort {
		t.Errorf("the hub is published on this machine's port %s but prints links to its own %s", published[1], hubPort)
	}
	check := strings.Join(hub.Healthcheck.Test, " ")
	if !strings.Contains(check, "/dev/tcp/127.0.0.1/"+hubPort+" ") || !strings.Contains(check, "GET /readyz ") {
		t.Errorf("the hub's health check %q does not ask /readyz on 127.0.0.1:%s", check, hubPort)
	}
}

// composeSubset is the part of the Compose Specification (compose-spec.io) this
// repository's file may use, each key with its type: a file decoded into it with
// unknown keys refused is one whose every key Compose knows and whose values have the
// shapes Compose takes. A key the file needs and this lacks is added here, from the
// specification.
type composeSubset struct {
	Name     string `yaml:"name"`
	Services map[string]struct {
		Image string `yaml:"image"`
		Build *struct {
			Context    string            `yaml:"context"`
			Dockerfile string            `yaml:"dockerfile"`
			Args       map[string]string `yaml:"args"`
			Target     string            `yaml:"target"`
		} `yaml:"build"`
		Command     []string          `yaml:"command"`
		Entrypoint  []string          `yaml:"entrypoint"`
		NetworkMode string            `yaml:"network_mode"`
		Ports       []string          `yaml:"ports"`
		Environment map[string]string `yaml:"environment"`
		DependsOn   map[string]struct {
			Condition string `yaml:"condition"`
			Restart   bool   `yaml:"restart"`
		} `yaml:"depends_on"`
		SecurityOpt []string `yaml:"security_opt"`
		Devices     []string `yaml:"devices"`
		Volumes     []string `yaml:"volumes"`
		Restart     string   `yaml:"restart"`
		User        string   `yaml:"user"`
		WorkingDir  string   `yaml:"working_dir"`
		Healthcheck *struct {
			Test        []string `yaml:"test"`
			Interval    string   `yaml:"interval"`
			Timeout     string   `yaml:"timeout"`
			Retries     int      `yaml:"retries"`
			StartPeriod string   `yaml:"start_period"`
		} `yaml:"healthcheck"`
	} `yaml:"services"`
	Volumes map[string]*struct {
		Driver string `yaml:"driver"`
	} `yaml:"volumes"`
}

// composeConditions are the depends_on conditions Compose takes.
var composeConditions = []string{"service_started", "service_healthy", "service_completed_successfully"}

// strictCompose decodes raw into composeSubset, refusing unknown keys and values of
// the wrong shape, and checks what the types cannot say.
func strictCompose(raw []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	var f composeSubset
	if err := dec.Decode(&f); err != nil {
		return err
	}
	if len(f.Services) == 0 {
		return errors.New("no services")
	}
	for name, svc := range f.Services {
		if (svc.Image == "") == (svc.Build == nil) {
			return fmt.Errorf("service %s: give it an image or a build", name)
		}
		for dep, d := range svc.DependsOn {
			if _, ok := f.Services[dep]; !ok {
				return fmt.Errorf("service %s depends on %s, which is no service", name, dep)
			}
			if !slices.Contains(composeConditions, d.Condition) {
				return fmt.Errorf("service %s: depends_on condition %q is none of %v", name, d.Condition, composeConditions)
			}
		}
		for _, v := range svc.Volumes {
			if src, _, _ := strings.Cut(v, ":"); !strings.HasPrefix(src, ".") && !strings.HasPrefix(src, "/") {
				if _, ok := f.Volumes[src]; !ok {
					return fmt.Errorf("service %s mounts the volume %s, which the file does not declare", name, src)
				}
			}
		}
	}
	return nil
}

// hubSettings are the environment variables the hub's code names: the env tags of its
// configuration and the names cmd/wshub reads itself (quoted in its source).
func hubSettings(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	setting := regexp.MustCompile(`"((?:WSHUB|DATABASE|ANTHROPIC|OPENAI)_[A-Z0-9_]+)[",]`)
	for _, dir := range []string{"../hub", "../cmd/wshub"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range setting.FindAllSubmatch(src, -1) {
				names[string(m[1])] = true
			}
		}
	}
	if !names["DATABASE_URL"] || !names["WSHUB_ADDR"] {
		t.Fatalf("the hub's settings were not found in its source (%d names)", len(names))
	}
	return names
}
