package hub

import (
	"fmt"
	"os"
	"time"
)

// The defaults of the host settings, for a Config built in code that leaves them unset.
const (
	DefaultHostHeartbeat = 30 * time.Second
	DefaultHostLostAfter = 10 * time.Minute
)

// maxHostID is a DNS label's length: a host id is usually a hostname's first label.
const maxHostID = 63

// hostSettings gives an unset host id its default, the hostname, and checks the host
// settings. (New gives the durations a Config built in code left zero their defaults
// first; from the environment, a zero was asked for.)
func (c *Config) hostSettings() error {
	if c.HostID == "" {
		name, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("WSHUB_HOST_ID is unset and the hostname cannot be read (%w): set WSHUB_HOST_ID", err)
		}
		if err := checkHostID(name); err != nil {
			return fmt.Errorf("WSHUB_HOST_ID is unset and the hostname %q cannot stand in for it (%w): set WSHUB_HOST_ID", name, err)
		}
		c.HostID = name
	} else if err := checkHostID(c.HostID); err != nil {
		return fmt.Errorf("WSHUB_HOST_ID %q: %w", c.HostID, err)
	}
	if c.HostHeartbeat <= 0 {
		return fmt.Errorf("WSHUB_HOST_HEARTBEAT (%s) must be positive", c.HostHeartbeat)
	}
	if c.HostLostAfter < 3*c.HostHeartbeat {
		return fmt.Errorf("WSHUB_HOST_LOST_AFTER (%s) must be at least three WSHUB_HOST_HEARTBEAT periods (3 × %s): "+
			"a host one late heartbeat away is not lost", c.HostLostAfter, c.HostHeartbeat)
	}
	return nil
}

// checkHostID refuses a host id that is empty, too long, or has other characters than
// letters, digits, '.', '-' and '_': it is shown in statuses and logs, and compared
// as it is written.
func checkHostID(id string) error {
	if id == "" {
		return fmt.Errorf("a host id may not be empty")
	}
	if len(id) > maxHostID {
		return fmt.Errorf("a host id has at most %d characters, not %d", maxHostID, len(id))
	}
	for _, r := range id {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '.' || r == '-' || r == '_') {
			return fmt.Errorf("a host id has letters, digits, '.', '-' and '_' only, not %q", r)
		}
	}
	return nil
}
