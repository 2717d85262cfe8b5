package sandbox

// netConfig is a "full" turn's network: what the script is given, and pasta.
type netConfig struct {
	Pasta string
	// Tools are the paths of ip, timeout and cat, as the script takes them.
	Tools []string
	Allow []egressRule
	// Dir is where the hub makes the turn's FIFO (its state directory).
	Dir string
	// Procs are the turn's cgroup.procs files, joined first (none when limits are off).
	Procs []string
	// Refuse and Route are filled in by the hub (onHost), from the host as it is when
	// the turn starts: its own addresses and the networks it is connected to, and
	// whether it has a default route (else there is nothing for pasta to connect, and
	// the sandbox's own loopback is all "full" can give).
	Refuse []string
	Route  bool
}
