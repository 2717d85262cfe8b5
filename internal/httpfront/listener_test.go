package httpfront

import (
	"net"
	"testing"
	"time"

	"github.com/wshub/wshub/internal/testkit/eventually"
)

// A connection the hub closed keeps answering deadlines without an error after its
// lingering ended (the client hung up at once): fasthttp sets them after the handler
// that closed it returns, and panics on an error.
func TestAClosedConnectionsDeadlinesAreMoot(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	l := Listener(ln)
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	conn, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	client.Close()
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	lc := conn.(*lingerConn)
	eventually.Eventually(t, time.Minute, "the lingering to end with the socket closed", func() bool {
		return lc.TCPConn.SetWriteDeadline(time.Now()) != nil
	})
	for name, set := range map[string]func(time.Time) error{"write": lc.SetWriteDeadline, "read": lc.SetReadDeadline, "both": lc.SetDeadline} {
		if err := set(time.Now().Add(time.Minute)); err != nil {
			t.Errorf("set %s deadline on the closed connection: %v", name, err)
		}
	}
}
