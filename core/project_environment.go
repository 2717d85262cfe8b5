package core

import "encoding/json"

// projectEnvironment checks the environment settings an update gives and returns
// them as kept (compact JSON; nil when none are given or they are cleared). Settings
// are refused in the words a workspace would fail with, as an invalid request.
func projectEnvironment(in UpdateProjectInput) ([]byte, error) {
	switch {
	case in.ClearEnvironment && in.Environment != nil:
		return nil, Errorf(CodeInvalidRequest, "give environment settings or clear them, not both")
	case in.Environment == nil:
		return nil, nil
	}
	e, err := ParseEnvironment(in.Environment, EnvironmentFromProject)
	if err != nil {
		if se, ok := err.(*SetupError); ok {
			return nil, Errorf(CodeInvalidRequest, "%s", se.Detail)
		}
		return nil, err
	}
	return json.Marshal(e)
}

// ProjectEnvironmentSettings reads a project's own environment settings for display
// (nil when it has none).
func ProjectEnvironmentSettings(p *Project) *Environment {
	if len(p.Environment) == 0 {
		return nil
	}
	e, err := ParseEnvironment(p.Environment, EnvironmentFromProject)
	if err != nil {
		return nil
	}
	return e
}
