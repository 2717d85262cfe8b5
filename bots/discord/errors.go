package discord

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/bwmarrin/discordgo"
)

// apiCode is Discord's JSON error code of a REST error (0: none).
func apiCode(err error) int {
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Message != nil {
		return re.Message.Code
	}
	return 0
}

// permanent: a REST error a retry cannot fix (unknown channel or message, missing
// access or permissions, a locked thread, a malformed request).
func permanent(err error) bool {
	var re *discordgo.RESTError
	if !errors.As(err, &re) || re.Response == nil {
		return false
	}
	c := re.Response.StatusCode
	return c >= 400 && c < 500 && c != http.StatusTooManyRequests && c != http.StatusRequestTimeout
}

// discordTransient: a rate limit, a 5xx, or the network: worth another attempt.
func discordTransient(err error) bool {
	var rl *discordgo.RateLimitError
	var re *discordgo.RESTError
	var ne net.Error
	switch {
	case errors.As(err, &rl):
		return true
	case errors.As(err, &re):
		return !permanent(err)
	case errors.As(err, &ne):
		return true
	}
	return false
}

// readLimited reads r, failing when it holds more than limit bytes.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return data, nil
}
