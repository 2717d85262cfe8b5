package machines

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
)

// hostMemMiB reads MemTotal its own way (whole-file string search) to check the parser.
func hostMemMiB(t *testing.T) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	_, after, ok := strings.Cut(string(data), "MemTotal:")
	if !ok {
		t.Fatalf("/proc/meminfo: expected a MemTotal line, got none")
	}
	line, _, _ := strings.Cut(after, "\n")
	kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(line), " kB"), 10, 64)
	if err != nil {
		t.Fatalf("/proc/meminfo MemTotal: expected a kB figure, got %q", line)
	}
	return kb / 1024
}

func TestLocalDescribesHost(t *testing.T) {
	l := NewLocal()
	got := l.List(context.Background())
	if len(got) != 1 {
		t.Fatalf("providers: expected 1, got %d", len(got))
	}
	p := got[0]
	if p.ID != core.LocalProviderID || p.DisplayName != "This host" || p.BillingSource != "service" {
		t.Errorf("provider: expected (%q, %q, %q), got (%q, %q, %q)",
			core.LocalProviderID, "This host", "service", p.ID, p.DisplayName, p.BillingSource)
	}
	if len(p.Sizes) != 1 {
		t.Fatalf("sizes: expected 1, got %d", len(p.Sizes))
	}
	mem := hostMemMiB(t)
	want := core.ProviderSize{
		ID:          "host",
		DisplayName: fmt.Sprintf("Host (%d vCPU, %.1f GiB)", runtime.NumCPU(), float64(mem)/1024),
		VCPUCount:   runtime.NumCPU(),
		MemoryMiB:   mem,
	}
	if mem == 0 {
		want.DisplayName = fmt.Sprintf("Host (%d vCPU)", runtime.NumCPU())
	}
	if p.Sizes[0] != want {
		t.Errorf("size: expected %+v, got %+v", want, p.Sizes[0])
	}
	if got := l.Default(); got != core.LocalProviderID {
		t.Errorf("Default: expected %q, got %q", core.LocalProviderID, got)
	}
}

func TestListReturnsCopies(t *testing.T) {
	l := newLocal(2, 1024)
	first := l.List(context.Background())
	first[0].Sizes[0].DisplayName = "changed"
	if got := l.List(context.Background())[0].Sizes[0].DisplayName; got != "Host (2 vCPU, 1.0 GiB)" {
		t.Errorf("size name after caller edit: expected %q, got %q", "Host (2 vCPU, 1.0 GiB)", got)
	}
}

func TestSizeName(t *testing.T) {
	tests := []struct {
		vcpus  int
		memMiB int64
		want   string
	}{
		{2, 23961, "Host (2 vCPU, 23.4 GiB)"},
		{16, 65536, "Host (16 vCPU, 64.0 GiB)"},
		{1, 0, "Host (1 vCPU)"},
	}
	for _, tt := range tests {
		if got := sizeName(tt.vcpus, tt.memMiB); got != tt.want {
			t.Errorf("sizeName(%d, %d): expected %q, got %q", tt.vcpus, tt.memMiB, tt.want, got)
		}
	}
}

func TestMemTotalMiB(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    int64
	}{
		{"typical", "MemTotal:       24538812 kB\nMemFree:         1000 kB\n", 23963},
		{"not first", "Foo: 1 kB\nMemTotal: 2048 kB\n", 2},
		{"missing line", "MemFree: 1000 kB\n", 0},
		{"bad number", "MemTotal: lots kB\n", 0},
		{"unknown unit", "MemTotal: 2048 MB\n", 0},
		{"empty", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "meminfo")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			if got := memTotalMiB(path); got != tt.want {
				t.Errorf("memTotalMiB: expected %d, got %d", tt.want, got)
			}
		})
	}
	if got := memTotalMiB(filepath.Join(t.TempDir(), "absent")); got != 0 {
		t.Errorf("memTotalMiB(absent file): expected 0, got %d", got)
	}
}

// WSHUB_LOCAL_CPU and WSHUB_LOCAL_MEMORY_MIB set the workspaces' size; what they leave
// unset is the host's.
func TestLocalSized(t *testing.T) {
	host := NewLocal().HostSize()
	tests := []struct {
		vcpus  int
		memMiB int64
		want   core.ProviderSize
	}{
		{1, 64, core.ProviderSize{ID: LocalSizeID, DisplayName: "1 vCPU, 64 MiB", VCPUCount: 1, MemoryMiB: 64}},
		{0, 0, host},
		{2, 0, core.ProviderSize{ID: LocalSizeID, DisplayName: fmt.Sprintf("2 vCPU, %d MiB", host.MemoryMiB), VCPUCount: 2, MemoryMiB: host.MemoryMiB}},
	}
	for _, tt := range tests {
		if got := NewLocalSized(tt.vcpus, tt.memMiB).HostSize(); got != tt.want {
			t.Errorf("NewLocalSized(%d, %d): expected %+v, got %+v", tt.vcpus, tt.memMiB, tt.want, got)
		}
	}
}
