package main

// reexec does nothing on Windows, which has no exec: the runtime keeps its default
// there (the hub serves on Linux and macOS).
func reexec(argv, vars []string) error { return nil }
