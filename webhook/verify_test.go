package webhook_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/webhook"
)

const secret = "whsec_test_secret"

var (
	now  = time.Unix(1700000000, 0)
	body = []byte(`{"eventId":"evt_1"}`)
)

// independentSig computes v1 with crypto/hmac directly, from the wording of api.md 6.3,
// so a mistake shared by Sign and Verify cannot make the tests pass.
func independentSig(secret string, t int64, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(strconv.FormatInt(t, 10) + "." + string(body)))
	return hex.EncodeToString(m.Sum(nil))
}

func TestKnownAnswer(t *testing.T) {
	// Computed once with: { printf '%s.' 1700000000; printf '%s' '{"eventId":"evt_1"}'; } |
	//   openssl dgst -sha256 -hmac whsec_test_secret -hex
	const want = "t=1700000000,v1=d0bc0fbc777c599eaf480b380c92864ed10b8d20246ded558927e0cd0ae04283"
	if got := webhook.Sign(secret, now, body); got != want {
		t.Fatalf("Sign = %q, want %q", got, want)
	}
	if err := webhook.VerifyAt(body, want, secret, now, webhook.DefaultTolerance); err != nil {
		t.Fatalf("VerifyAt(known vector) = %v, want nil", err)
	}
}

func TestVerifyAt(t *testing.T) {
	good := webhook.Sign(secret, now, body)
	v1 := good[strings.Index(good, "v1="):]
	ts := "t=" + strconv.FormatInt(now.Unix(), 10)
	flipped := append([]byte(nil), body...)
	flipped[3] ^= 0x01
	var reencoded bytes.Buffer
	if err := json.Indent(&reencoded, body, "", " "); err != nil {
		t.Fatal(err)
	}
	wrong := strings.Repeat("0", 64)

	tests := []struct {
		name   string
		body   []byte
		header string
		secret string
		now    time.Time
		tol    time.Duration
		want   error // nil means "verifies"
	}{
		{name: "valid", header: good},
		{name: "independent HMAC", header: ts + ",v1=" + independentSig(secret, now.Unix(), body)},
		{name: "spaces after commas", header: ts + ", " + v1},
		{name: "another secret", header: good, secret: "whsec_other", want: webhook.ErrNoValidSignature},
		{name: "secret without whsec_ prefix", header: good, secret: strings.TrimPrefix(secret, "whsec_"), want: webhook.ErrNoValidSignature},
		{name: "signed without whsec_ prefix", header: webhook.Sign("test_secret", now, body), want: webhook.ErrNoValidSignature},
		{name: "one flipped body byte", body: flipped, header: good, want: webhook.ErrNoValidSignature},
		{name: "body re-encoded", body: reencoded.Bytes(), header: good, want: webhook.ErrNoValidSignature},
		{name: "trailing newline added", body: append(append([]byte(nil), body...), '\n'), header: good, want: webhook.ErrNoValidSignature},
		{name: "timestamp changed", header: "t=1700000001," + v1, want: webhook.ErrNoValidSignature},
		{name: "empty secret", header: good, secret: "", want: webhook.ErrEmptySecret},
		{name: "several v1, one valid", header: ts + ",v1=" + wrong + "," + v1 + ",v1=" + wrong},
		{name: "several v1, none valid", header: ts + ",v1=" + wrong + ",v1=" + wrong, want: webhook.ErrNoValidSignature},
		{name: "unknown scheme ignored", header: ts + ",v0=zzz," + v1 + ",v2=abc"},
		{name: "only unknown schemes", header: ts + ",v0=" + wrong, want: webhook.ErrInvalidHeader},

		{name: "exactly tolerance old", header: good, now: now.Add(5 * time.Minute)},
		{name: "tolerance+1s old", header: good, now: now.Add(5*time.Minute + time.Second), want: webhook.ErrTimestampTooOld},
		{name: "exactly tolerance ahead", header: good, now: now.Add(-5 * time.Minute)},
		{name: "tolerance+1s ahead", header: good, now: now.Add(-5*time.Minute - time.Second), want: webhook.ErrTimestampInFuture},
		{name: "negative tolerance skips time check", header: good, now: now.Add(1000 * time.Hour), tol: -1},
		{name: "stale and forged", header: "t=1," + v1, want: webhook.ErrNoValidSignature},

		{name: "missing header", header: "", want: webhook.ErrMissingHeader},
		{name: "no t", header: v1, want: webhook.ErrInvalidHeader},
		{name: "no v1", header: ts, want: webhook.ErrInvalidHeader},
		{name: "t not an integer", header: "t=abc," + v1, want: webhook.ErrInvalidHeader},
		{name: "t negative", header: "t=-1," + v1, want: webhook.ErrInvalidHeader},
		{name: "t with sign", header: "t=+1700000000," + v1, want: webhook.ErrInvalidHeader},
		{name: "t empty", header: "t=," + v1, want: webhook.ErrInvalidHeader},
		{name: "t too large", header: "t=99999999999999999999," + v1, want: webhook.ErrInvalidHeader},
		{name: "two t", header: ts + "," + ts + "," + v1, want: webhook.ErrInvalidHeader},
		{name: "v1 not hex", header: ts + ",v1=xyz", want: webhook.ErrInvalidHeader},
		{name: "v1 odd length", header: ts + ",v1=abc", want: webhook.ErrInvalidHeader},
		{name: "v1 empty", header: ts + ",v1=", want: webhook.ErrInvalidHeader},
		{name: "part without =", header: ts + "," + v1 + ",junk", want: webhook.ErrInvalidHeader},
		{name: "semicolons", header: strings.ReplaceAll(good, ",", ";"), want: webhook.ErrInvalidHeader},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, s, n, tol := tc.body, tc.secret, tc.now, tc.tol
			if b == nil {
				b = body
			}
			if s == "" && tc.want != webhook.ErrEmptySecret {
				s = secret
			}
			if n.IsZero() {
				n = now
			}
			if tol == 0 {
				tol = webhook.DefaultTolerance
			}
			err := webhook.VerifyAt(b, tc.header, s, n, tol)
			if tc.want == nil && err != nil {
				t.Fatalf("VerifyAt(%q) = %v, want nil", tc.header, err)
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("VerifyAt(%q) = %v, want errors.Is(err, %v)", tc.header, err, tc.want)
			}
		})
	}
}

func TestVerifyUsesNow(t *testing.T) {
	if err := webhook.Verify(body, webhook.Sign(secret, time.Now(), body), secret); err != nil {
		t.Fatalf("Verify(fresh) = %v, want nil", err)
	}
	err := webhook.Verify(body, webhook.Sign(secret, time.Now().Add(-time.Hour), body), secret)
	if !errors.Is(err, webhook.ErrTimestampTooOld) {
		t.Fatalf("Verify(1 h old) = %v, want %v", err, webhook.ErrTimestampTooOld)
	}
}

func TestZeroToleranceSkipsTimeCheck(t *testing.T) {
	for _, at := range []time.Time{now.Add(1000 * time.Hour), now.Add(-1000 * time.Hour)} {
		if err := webhook.VerifyAt(body, webhook.Sign(secret, now, body), secret, at, 0); err != nil {
			t.Fatalf("VerifyAt(tolerance 0, now %v) = %v, want nil", at, err)
		}
	}
}

func TestConstructEvent(t *testing.T) {
	full := []byte(`{"eventId":"evt_9","type":"workspace.turn.completed","createdAt":1700000000123,` +
		`"workspaceId":"ws_1","branch":"wshub/fix","turnId":"turn_2","outcome":"completed",` +
		`"reply":{"text":"Done.","truncated":true},"messageId":"msg_3","future":1}`)
	want := webhook.Event{
		EventID: "evt_9", Type: webhook.TypeTurnCompleted, CreatedAt: 1700000000123,
		WorkspaceID: "ws_1", Branch: "wshub/fix", TurnID: "turn_2", Outcome: webhook.OutcomeCompleted,
		Reply: webhook.Reply{Text: "Done.", Truncated: true}, MessageID: "msg_3",
	}
	got, err := webhook.ConstructEvent(full, webhook.Sign(secret, time.Now(), full), secret)
	if err != nil || got != want {
		t.Fatalf("ConstructEvent = %+v, %v; want %+v, nil", got, err, want)
	}

	// A forged body is rejected before it is parsed.
	_, err = webhook.ConstructEvent(full, webhook.Sign("whsec_other", time.Now(), full), secret)
	if !errors.Is(err, webhook.ErrNoValidSignature) {
		t.Fatalf("ConstructEvent(forged) error = %v, want %v", err, webhook.ErrNoValidSignature)
	}

	// A signed body that is not an event: a distinct error that keeps the json cause.
	bad := []byte(`{"createdAt":"yesterday"}`)
	_, err = webhook.ConstructEvent(bad, webhook.Sign(secret, time.Now(), bad), secret)
	var typeErr *json.UnmarshalTypeError
	if !errors.Is(err, webhook.ErrInvalidPayload) || !errors.As(err, &typeErr) {
		t.Fatalf("ConstructEvent(bad JSON) error = %v, want ErrInvalidPayload wrapping *json.UnmarshalTypeError", err)
	}
	if errors.Is(err, webhook.ErrNoValidSignature) {
		t.Fatalf("ConstructEvent(bad JSON) error = %v, must not be a signature error", err)
	}
}

func FuzzVerify(f *testing.F) {
	good := webhook.Sign(secret, now, body)
	for _, h := range []string{good, "", "t=", "v1=", "t=1,v1=00", "t=1700000000,v0=zz,v1=" + strings.Repeat("a", 64),
		"t=99999999999999999,v1=ab", ",,,", "t=1,t=2", "=,="} {
		f.Add(body, h, secret, int64(0))
	}
	f.Add([]byte{}, good, "", int64(-400))
	f.Add([]byte("\x00\xff"), good, "whsec_", int64(1<<40))
	f.Fuzz(func(t *testing.T, body []byte, header, secret string, offset int64) {
		at := now.Add(time.Duration(offset) * time.Second)
		// Arbitrary input must produce an answer, never a panic.
		_ = webhook.VerifyAt(body, header, secret, at, webhook.DefaultTolerance)
		_ = webhook.VerifyAt(body, header, secret, at, 0)
		if secret == "" {
			return
		}
		// What the hub signs for any body and secret always verifies.
		if err := webhook.VerifyAt(body, webhook.Sign(secret, now, body), secret, now, webhook.DefaultTolerance); err != nil {
			t.Fatalf("VerifyAt(Sign(%q, %q)) = %v, want nil", secret, body, err)
		}
	})
}
