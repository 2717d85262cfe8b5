package agents

import (
	"bytes"
)

// Bounds of what the hub keeps of an agent's output. An agent is untrusted code:
// whatever it prints, the hub keeps a bounded amount of it.
const (
	// maxStdout is how much of a command agent's standard output is kept (the head).
	maxStdout = 1 << 20
	// maxLine is the longest JSON line a CLI parser looks at; longer lines (huge tool
	// results) are skipped whole.
	maxLine = 1 << 20
	// maxArgLen is Linux's limit on one argument (MAX_ARG_STRLEN = 32 pages, less the
	// terminating NUL); a prompt passed as an argument must stay under it.
	maxArgLen = 32*4096 - 1
)

// headBuffer keeps the first max bytes written to it and drops the rest, always
// reporting success so the writer keeps draining the pipe.
type headBuffer struct {
	max int
	buf bytes.Buffer
}

func (b *headBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (b *headBuffer) String() string { return b.buf.String() }

// lineWriter splits what is written to it into lines and hands each complete line
// (without its newline) to fn. A line longer than max is dropped whole, so memory
// stays bounded however the agent prints. close hands over a last unterminated line.
type lineWriter struct {
	max      int
	fn       func(line []byte)
	buf      []byte
	skipping bool // inside an over-long line, waiting for its end
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.add(p)
			break
		}
		w.add(p[:i])
		if !w.skipping {
			w.fn(w.buf)
		}
		w.buf, w.skipping = w.buf[:0], false
		p = p[i+1:]
	}
	return n, nil
}

func (w *lineWriter) add(p []byte) {
	if w.skipping {
		return
	}
	if len(w.buf)+len(p) > w.max {
		w.buf, w.skipping = w.buf[:0], true
		return
	}
	w.buf = append(w.buf, p...)
}

func (w *lineWriter) close() {
	if !w.skipping && len(w.buf) > 0 {
		w.fn(w.buf)
	}
	w.buf, w.skipping = w.buf[:0], false
}
