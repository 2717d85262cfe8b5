package gitrepo

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/tailscale/hujson"

	"github.com/wshub/wshub/core"
)

var _ core.EnvironmentFiles = (*Mirror)(nil)

// ReadFileAt reads a file of the project's mirror at the commit ref names (a branch,
// tag or commit), from git's objects: nothing of a checkout is read, so a symlink in
// the repository (mode 120000) is no file here rather than a way to the hub's disk.
func (m *Mirror) ReadFileAt(ctx context.Context, p *core.Project, ref, path string, max int64) ([]byte, bool, error) {
	mirror := cmp.Or(p.MirrorPath, m.Path(p.ID))
	g := &runner{prog: cmp.Or(m.Git, "git"), redact: redactor{mirror: mirror}}
	commit, err := resolveBase(ctx, g, mirror, &core.Workspace{BaseRef: ref})
	if err != nil {
		return nil, false, err
	}
	out, err := g.run(ctx, mirror, "ls-tree", "-z", "--long", "--full-tree", commit, "--", path)
	if err != nil {
		return nil, false, err
	}
	// "<mode> SP <type> SP <object> SP+ <size> TAB <path> NUL"
	meta, name, ok := strings.Cut(strings.TrimSuffix(out, "\x00"), "\t")
	if !ok || name != path {
		return nil, false, nil
	}
	f := strings.Fields(meta)
	if len(f) != 4 || f[1] != "blob" || (f[0] != "100644" && f[0] != "100755") {
		return nil, false, nil
	}
	size, err := strconv.ParseInt(f[3], 10, 64)
	if err != nil {
		return nil, false, fmt.Errorf("ls-tree size %q: %w", f[3], err)
	}
	if size > max {
		return nil, false, core.ErrFileTooLarge
	}
	data, err := g.run(ctx, mirror, "cat-file", "blob", f[2])
	if err != nil {
		return nil, false, err
	}
	return []byte(data), true, nil
}

// StandardizeJSONC makes JSON with comments and trailing commas plain JSON
// (tailscale/hujson: the JWCC form the Dev Container spec's files are written in).
func (m *Mirror) StandardizeJSONC(data []byte) ([]byte, error) {
	return hujson.Standardize(bytes.Clone(data))
}
