package agents

import (
	"context"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// binDir is a directory of fake agent programs with a lookPath confined to it.
type binDir struct {
	t   *testing.T
	dir string
}

func newBinDir(t *testing.T) *binDir { return &binDir{t: t, dir: t.TempDir()} }

// install writes an executable shell script named name.
func (b *binDir) install(name string) {
	b.t.Helper()
	if err := os.WriteFile(filepath.Join(b.dir, name), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		b.t.Fatal(err)
	}
}

// lookPath finds name in the directory if it is a regular executable file.
func (b *binDir) lookPath(name string) (string, error) {
	p := filepath.Join(b.dir, name)
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return "", exec.ErrNotFound
	}
	return p, nil
}

func TestAvailable(t *testing.T) {
	tests := []struct {
		name      string
		installed []string
		commands  map[string]string
		want      []string
	}{
		{"nothing", nil, nil, []string{}},
		{"all programs", []string{"grok", "cursor-agent", "codex", "claude"}, nil,
			[]string{"agent_1", "agent_2", "agent_3", "agent_4"}},
		{"some programs", []string{"codex", "grok"}, nil, []string{"agent_2", "agent_4"}},
		{"commands only", nil, map[string]string{"agent_3": "./fake-agent", "agent_1": "cat"},
			[]string{"agent_1", "agent_3"}},
		{"commands and programs", []string{"claude"}, map[string]string{"agent_4": "cat"},
			[]string{"agent_1", "agent_4"}},
		{"blank command ignored", nil, map[string]string{"agent_2": "  "}, []string{}},
		{"unknown id ignored", nil, map[string]string{"agent_5": "cat"}, []string{}},
		{"other file names ignored", []string{"claude-code", "Codex"}, nil, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin := newBinDir(t)
			for _, name := range tt.installed {
				bin.install(name)
			}
			got := NewCatalog(tt.commands, bin.lookPath).Available(context.Background())
			if !slices.Equal(got, tt.want) {
				t.Errorf("Available: expected %v, got %v", tt.want, got)
			}
		})
	}
}

func TestAvailableFollowsInstalls(t *testing.T) {
	bin := newBinDir(t)
	c := NewCatalog(nil, bin.lookPath)
	if got := c.Available(context.Background()); len(got) != 0 {
		t.Fatalf("before install: expected [], got %v", got)
	}
	bin.install("cursor-agent")
	if got, want := c.Available(context.Background()), []string{"agent_3"}; !slices.Equal(got, want) {
		t.Errorf("after install: expected %v, got %v", want, got)
	}
	if err := os.Chmod(filepath.Join(bin.dir, "cursor-agent"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := c.Available(context.Background()); len(got) != 0 {
		t.Errorf("after chmod -x: expected [], got %v", got)
	}
}

func TestDefaultLookPathUsesPATH(t *testing.T) {
	bin := newBinDir(t)
	bin.install("codex")
	t.Setenv("PATH", bin.dir)
	if got, want := NewCatalog(nil, nil).Available(context.Background()), []string{"agent_2"}; !slices.Equal(got, want) {
		t.Errorf("Available with PATH=%s: expected %v, got %v", bin.dir, want, got)
	}
}

func TestNewCatalogCopiesCommands(t *testing.T) {
	commands := map[string]string{"agent_1": "cat"}
	c := NewCatalog(commands, func(string) (string, error) { return "", errors.New("none") })
	delete(commands, "agent_1")
	if got, want := c.Available(context.Background()), []string{"agent_1"}; !slices.Equal(got, want) {
		t.Errorf("after caller edits its map: expected %v, got %v", want, got)
	}
}

func TestProgramsCoverAgentIDs(t *testing.T) {
	got := slices.Sorted(maps.Keys(Programs))
	want := []string{"agent_1", "agent_2", "agent_3", "agent_4"}
	if !slices.Equal(got, want) {
		t.Errorf("Programs keys: expected %v, got %v", want, got)
	}
}

func TestCommandsFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		environ []string
		want    map[string]string
	}{
		{"none", []string{"PATH=/bin", "HOME=/root"}, map[string]string{}},
		{"all four", []string{
			"WSHUB_AGENT_1_COMMAND=one", "WSHUB_AGENT_2_COMMAND=two",
			"WSHUB_AGENT_3_COMMAND=three", "WSHUB_AGENT_4_COMMAND=four",
		}, map[string]string{"agent_1": "one", "agent_2": "two", "agent_3": "three", "agent_4": "four"}},
		{"value with = and spaces", []string{"WSHUB_AGENT_2_COMMAND=env A=b ./agent --x"},
			map[string]string{"agent_2": "env A=b ./agent --x"}},
		{"blank values skipped", []string{"WSHUB_AGENT_1_COMMAND=", "WSHUB_AGENT_3_COMMAND=  "}, map[string]string{}},
		{"out of range and malformed", []string{
			"WSHUB_AGENT_0_COMMAND=x", "WSHUB_AGENT_5_COMMAND=x", "WSHUB_AGENT_10_COMMAND=x",
			"WSHUB_AGENT__COMMAND=x", "WSHUB_AGENT_1_CMD=x", "wshub_agent_1_command=x", "WSHUB_AGENT_1_COMMAND",
		}, map[string]string{}},
		{"first wins", []string{"WSHUB_AGENT_1_COMMAND=first", "WSHUB_AGENT_1_COMMAND=second"},
			map[string]string{"agent_1": "first"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CommandsFromEnv(tt.environ); !maps.Equal(got, tt.want) {
				t.Errorf("CommandsFromEnv: expected %v, got %v", tt.want, got)
			}
		})
	}
}
