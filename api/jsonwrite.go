package api

import (
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
)

// The API's busiest answers (a workspace, a list of them, a page of messages) are
// written by hand rather than through encoding/json's reflection and a fiber.Map: a
// 200-message page spent more of the hub's CPU encoding than PostgreSQL spent finding
// it (make bench B2). The bytes are exactly what json.Marshal writes for the wire
// structs these answers were encoded from (field order, omitempty, HTML-safe
// escaping); those structs live in jsonwrite_test.go, which holds the two equal for
// random values, and the OpenAPI validation in the tests reads every answer.

// jsonBufs holds the buffers answers are written into; fasthttp copies the body out,
// so a buffer returns at once. Ones grown past maxPooledJSON (a long workspace list)
// are left to the collector rather than held.
var jsonBufs = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

const maxPooledJSON = 1 << 20

// sendJSON answers status with the JSON object write appends.
func sendJSON(c *fiber.Ctx, status int, write func([]byte) []byte) error {
	bp := jsonBufs.Get().(*[]byte)
	b := write((*bp)[:0])
	c.Status(status)
	c.Response().Header.SetContentType(fiber.MIMEApplicationJSON)
	c.Response().SetBody(b)
	if cap(b) <= maxPooledJSON {
		*bp = b
		jsonBufs.Put(bp)
	}
	return nil
}

// appendString is encoding/json's string encoding with HTML escaping, as Marshal
// writes it: <, > and & as \u003c, \u003e and \u0026, invalid UTF-8 as \ufffd, and
// U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if unescaped[s[i]] { // most of every text: one look-up a byte
			i++
			continue
		}
		if c := s[i]; c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// unescaped marks the bytes appendString copies as they are: ASCII from space up, but
// for the quote, the backslash and HTML's <, > and &.
var unescaped = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// member appends `,"key":`: every member but an object's first, which its opening
// writes with the brace.
func member(b []byte, key string) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

func appendInt(b []byte, key string, v int64) []byte {
	return strconv.AppendInt(member(b, key), v, 10)
}

func appendStr(b []byte, key, v string) []byte { return appendString(member(b, key), v) }

// appendOptStr is an omitempty string.
func appendOptStr(b []byte, key, v string) []byte {
	if v == "" {
		return b
	}
	return appendStr(b, key, v)
}

// appendArray appends items as a JSON array, each written by write.
func appendArray[T any](b []byte, items []T, write func([]byte, T) []byte) []byte {
	b = append(b, '[')
	for i, item := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = write(b, item)
	}
	return append(b, ']')
}

// appendAuthor is authorJSON, or nothing for nil (omitempty).
func appendAuthor(b []byte, key string, a *core.Author) []byte {
	if a == nil {
		return b
	}
	b = appendString(append(member(b, key), `{"kind":`...), a.Kind)
	b = appendStr(b, "id", a.ID)
	b = appendStr(b, "name", a.Name)
	b = appendOptStr(b, "url", a.URL)
	return append(b, '}')
}

// appendMessage is messageJSON (toMessage).
func appendMessage(b []byte, m *core.Message) []byte {
	b = appendString(append(b, `{"messageId":`...), m.ID)
	b = appendInt(b, "seq", m.Seq)
	b = appendStr(b, "role", m.Role)
	b = appendStr(b, "text", m.Text)
	b = appendStr(b, "status", string(m.Status))
	b = appendOptStr(b, "turnId", m.TurnID)
	b = appendOptStr(b, "outcome", string(m.Outcome))
	b = appendInt(b, "createdAt", ms(m.CreatedAt))
	if m.DeliveredAt != nil {
		b = appendInt(b, "deliveredAt", ms(*m.DeliveredAt))
	}
	if len(m.Assets) > 0 {
		b = appendArray(member(b, "attachments"), m.Assets, appendAsset)
	}
	b = appendAuthor(b, "author", m.Author)
	return append(b, '}')
}

// appendAsset is assetJSON (toAsset).
func appendAsset(b []byte, a *core.Asset) []byte {
	b = appendString(append(b, `{"assetId":`...), a.ID)
	b = appendStr(b, "mimeType", a.MimeType)
	b = appendStr(b, "originalName", a.OriginalName)
	b = appendInt(b, "sizeBytes", a.SizeBytes)
	return append(b, '}')
}

// appendMessagePage is List messages' answer: {"latestSeq", "messages", "turnFailure"},
// in the order encoding/json writes a map's keys.
func appendMessagePage(b []byte, p *core.MessagePage) []byte {
	b = strconv.AppendInt(append(b, `{"latestSeq":`...), p.LatestSeq, 10)
	b = appendArray(append(b, `,"messages":`...), p.Messages, appendMessage)
	if f := p.TurnFailure; f != nil {
		b = appendString(append(b, `,"turnFailure":{"turnId":`...), f.TurnID)
		b = appendStr(b, "agent", f.Agent)
		b = appendStr(b, "code", f.Code)
		b = appendStr(b, "message", f.Message)
		b = append(b, '}')
	}
	return append(b, '}')
}

// appendWorkspace is workspaceJSON (toWorkspace).
func appendWorkspace(b []byte, w *core.Workspace) []byte {
	b = appendString(append(b, `{"workspaceId":`...), w.ID)
	b = appendStr(b, "providerId", w.ProviderID)
	b = appendStr(b, "projectId", w.ProjectID)
	b = appendStr(b, "branch", w.Branch)
	b = appendStr(b, "baseRef", w.BaseRef)
	b = appendStr(b, "state", string(w.State))
	b = appendStr(b, "statusCode", w.StatusCode)
	b = appendOptStr(b, "statusDetail", w.StatusDetail)
	b = appendOptStr(b, "headCommit", w.HeadCommit)
	if p := pushed(w.LastPush); p != nil {
		b = strconv.AppendBool(member(b, "pushed"), *p)
	}
	b = appendOptStr(b, "origin", w.Origin)
	b = appendOptStr(b, "title", w.Title)
	b = appendAuthor(b, "startedBy", w.StartedBy)
	b = appendOptStr(b, "host", w.Host)
	if pr := w.Pull.Ref(); pr != nil {
		b = appendString(append(member(b, "pullRequest"), `{"url":`...), pr.URL)
		b = appendInt(b, "number", pr.Number)
		b = appendStr(b, "state", pr.State)
		b = append(b, '}')
	}
	b = appendStr(b, "startupPhase", w.StartupPhase)
	b = appendStr(b, "runtimeState", w.RuntimeState)
	b = appendStr(b, "agentStatus", w.AgentStatus())
	b = appendInt(b, "latestSeq", w.LatestSeq)
	if lt := w.LastTurnInfo(); lt != nil {
		b = appendString(append(member(b, "lastTurn"), `{"turnId":`...), lt.TurnID)
		b = appendStr(b, "outcome", string(lt.Outcome))
		b = appendInt(b, "completedAt", ms(lt.CompletedAt))
		b = append(b, '}')
	}
	b = appendInt(b, "createdAt", ms(w.CreatedAt))
	b = appendInt(b, "updatedAt", ms(w.UpdatedAt))
	return append(b, '}')
}

// sendWorkspace answers {"workspace": …}.
func sendWorkspace(c *fiber.Ctx, status int, w *core.Workspace) error {
	return sendJSON(c, status, func(b []byte) []byte {
		return append(appendWorkspace(append(b, `{"workspace":`...), w), '}')
	})
}
