package core

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// A project's secrets: values its setup needs (a registry token, a test database's
// URL) that the repository must not hold. The operator sets them; they are sealed
// bound to the project and the secret's name, given to setup and update scripts as
// variables, to turns only when marked for the agent, and masked (secret_mask.go) in
// everything a run of the project's workspaces says. They are listed by name, never
// shown.

// ProjectSecret is one secret as the store keeps it.
type ProjectSecret struct {
	ProjectID string
	Name      string
	// Agent: turns get it too, not only the environment's scripts.
	Agent bool
	// SealedValue is the value sealed bound to the project and the name.
	SealedValue []byte
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Bounds of a project's secrets.
const (
	// MaxProjectSecrets is how many secrets a project may have.
	MaxProjectSecrets = 100
	// MaxSecretValue bounds a value, in bytes: tokens, URLs and keys, not files.
	MaxSecretValue = 32 << 10
	maxSecretName  = 100
)

// ProjectSecretQueries are the store statements of projects' secrets.
type ProjectSecretQueries interface {
	// ListProjectSecrets lists a project's secrets in name order, values sealed.
	ListProjectSecrets(ctx context.Context, projectID string) ([]*ProjectSecret, error)
	// ProjectSecretNames names the secrets of each of the projects, in name order, in
	// one read (values are not read): a list page's.
	ProjectSecretNames(ctx context.Context, projectIDs []string) (map[string][]string, error)
	// PutProjectSecret inserts the secret, or replaces the value and agent flag of the
	// project's secret of that name (its CreatedAt kept, and set on s); created says
	// which.
	PutProjectSecret(ctx context.Context, s *ProjectSecret) (created bool, err error)
	// DeleteProjectSecret deletes one; false when the project had none of that name.
	DeleteProjectSecret(ctx context.Context, projectID, name string) (bool, error)
}

// The audited actions on a project's secrets: the target is the project, the detail
// the secret's name (never its value).
const (
	AuditSecretSet     = "project.secret_set"
	AuditSecretRemoved = "project.secret_removed"
)

// ProjectSecretInput is a secret to set.
type ProjectSecretInput struct {
	ProjectID string
	Name      string
	// Value is the secret; line breaks that end it are dropped (a file written by
	// `echo` ends with one, which no variable wants and which masking would miss).
	Value string
	Agent bool
}

// ProjectSecrets are the operator's commands on projects' secrets (wshub admin project
// secret).
type ProjectSecrets struct {
	kernel
	store projectSecretStore
}

// projectSecretStore is what ProjectSecrets reads and writes.
type projectSecretStore interface {
	TxStore
	ProjectQueries
	ProjectSecretQueries
}

// CheckSecretName refuses a name that cannot be a secret's: not a variable name, too
// long, or one the hub sets itself.
func CheckSecretName(name string) error {
	switch {
	case name == "":
		return Errorf(CodeInvalidRequest, "a secret needs a name")
	case len(name) > maxSecretName:
		return Errorf(CodeInvalidRequest, "a secret's name is at most %d characters", maxSecretName)
	case !envNamePattern.MatchString(name):
		return Errorf(CodeInvalidRequest, "secret name %q is not a variable name: letters, digits and _, not starting with a digit", cut(name, 60))
	case ReservedEnvName(name):
		return Errorf(CodeInvalidRequest, "a secret may not be named %s: the hub sets that variable itself", name)
	}
	return nil
}

// checkSecretValue refuses a value that cannot be given as a variable or masked. It
// never quotes the value: the refusal is shown and may be logged.
func checkSecretValue(v string) error {
	switch {
	case len(v) > MaxSecretValue:
		return Errorf(CodeInvalidRequest, "a secret's value is at most %d KiB; this one is %d bytes", MaxSecretValue>>10, len(v))
	case len(v) < MinMaskedSecret:
		return Errorf(CodeInvalidRequest, "a secret's value is at least %d bytes, or it could not be masked in what the agent says", MinMaskedSecret)
	}
	return CheckText("a secret's value", v)
}

// Set creates the project's secret of that name, or replaces its value and flag.
func (s *ProjectSecrets) Set(ctx context.Context, in ProjectSecretInput) (*ProjectSecret, error) {
	return s.set(ctx, in, "", actor{id: actorOperator})
}

// secretProject checks the project a command on secrets names: for the operator
// (account "") any account's, for a front-end the account's own and not removed, so
// that another's is as missing as one that never was.
func secretProject(p *Project, err error, account string) (*Project, error) {
	if err == nil && account != "" && (p.AccountID != account || p.RemovedAt != nil) {
		err = ErrNoRows
	}
	if err != nil {
		return nil, notFound(err, CodeNotFound, "no such project")
	}
	return p, nil
}

// set is Set for the project of account ("": any), audited as by.
func (s *ProjectSecrets) set(ctx context.Context, in ProjectSecretInput, account string, by actor) (*ProjectSecret, error) {
	if err := CheckSecretName(in.Name); err != nil {
		return nil, err
	}
	value := strings.TrimRight(in.Value, "\r\n")
	if err := checkSecretValue(value); err != nil {
		return nil, err
	}
	if err := s.requireSealer(); err != nil {
		return nil, err
	}
	var out *ProjectSecret
	err := s.store.InTx(ctx, func(q Queries) error {
		// Locked, so that two sets cannot both take the last place under the cap.
		p, err := q.LockProject(ctx, in.ProjectID)
		if p, err = secretProject(p, err, account); err != nil {
			return err
		}
		if p.RemovedAt != nil {
			return Errorf(CodeNotFound, "the project was removed")
		}
		have, err := q.ListProjectSecrets(ctx, p.ID)
		if err != nil {
			return err
		}
		if len(have) >= MaxProjectSecrets && !hasSecret(have, in.Name) {
			return Errorf(CodeQuotaExceeded, "a project has at most %d secrets; remove one first", MaxProjectSecrets)
		}
		sealed, err := s.seal([]byte(value), SealedProjectSecret.binding(p.ID, in.Name))
		if err != nil {
			return err
		}
		now := s.clock.Now()
		out = &ProjectSecret{ProjectID: p.ID, Name: in.Name, Agent: in.Agent, SealedValue: sealed, CreatedAt: now, UpdatedAt: now}
		if _, err := q.PutProjectSecret(ctx, out); err != nil {
			return err
		}
		detail := in.Name
		if in.Agent {
			detail += " (given to the agent)"
		}
		return by.audit(ctx, q, p.AccountID, now, AuditSecretSet, p.ID, detail)
	})
	return out, err
}

func hasSecret(secrets []*ProjectSecret, name string) bool {
	for _, s := range secrets {
		if s.Name == name {
			return true
		}
	}
	return false
}

// List lists the project's secrets in name order, without their values.
func (s *ProjectSecrets) List(ctx context.Context, projectID string) ([]*ProjectSecret, error) {
	_, list, err := s.list(ctx, projectID, "")
	return list, err
}

// list reads the project of account ("": any) and its secrets, without their values.
func (s *ProjectSecrets) list(ctx context.Context, projectID, account string) (*Project, []*ProjectSecret, error) {
	p, err := s.store.GetProjectByID(ctx, projectID)
	if p, err = secretProject(p, err, account); err != nil {
		return nil, nil, err
	}
	list, err := s.store.ListProjectSecrets(ctx, projectID)
	for _, sec := range list {
		sec.SealedValue = nil
	}
	return p, list, err
}

// Remove deletes the project's secret of that name: workspaces set up after, and
// turns started after, no longer get it.
func (s *ProjectSecrets) Remove(ctx context.Context, projectID, name string) error {
	return s.remove(ctx, projectID, name, "", actor{id: actorOperator})
}

// remove is Remove for the project of account ("": any), audited as by.
func (s *ProjectSecrets) remove(ctx context.Context, projectID, name, account string, by actor) error {
	return s.store.InTx(ctx, func(q Queries) error {
		p, err := q.GetProjectByID(ctx, projectID)
		if p, err = secretProject(p, err, account); err != nil {
			return err
		}
		ok, err := q.DeleteProjectSecret(ctx, p.ID, name)
		if err != nil {
			return err
		}
		if !ok {
			return Errorf(CodeNotFound, "the project has no secret %q", cut(name, maxSecretName))
		}
		return by.audit(ctx, q, p.AccountID, s.clock.Now(), AuditSecretRemoved, p.ID, name)
	})
}

// secretPurpose says which of a project's secrets a run gets.
type secretPurpose int

const (
	// secretsForSetup: setup and update scripts get every secret, except that one run
	// from a base other than the project's default branch gets the agent's only.
	secretsForSetup secretPurpose = iota
	// secretsForAgent: turns get the secrets marked for the agent.
	secretsForAgent
)

// secretsFor returns the secrets a run of ws gets as NAME=value, and the values of
// every secret of the project: what is masked in what the run says. Every value is
// masked, not only those the run got, because a setup may leave a setup-only secret
// where a later turn reads it (a registry token in ~/.npmrc).
//
// A workspace based elsewhere than the project's default branch runs a setup script
// that a member chose (any branch's), which must not be able to read what the
// operator gave only to the default branch's setup. Any other spelling of the default
// branch counts as elsewhere: that fails closed.
func (s environments) secretsFor(ctx context.Context, ws *Workspace, p *Project, purpose secretPurpose) (env, values []string, err error) {
	secrets, err := openSecrets(ctx, s.kernel, s.store, p.ID)
	if err != nil {
		return nil, nil, err
	}
	env, values = secretsEnv(secrets, ws, p, purpose)
	return env, values, nil
}

// secretsEnv is secretsFor on secrets already opened.
func secretsEnv(secrets []openSecret, ws *Workspace, p *Project, purpose secretPurpose) (env, values []string) {
	all := purpose == secretsForSetup && p.DefaultBranch != "" && ws.BaseRef == p.DefaultBranch
	for _, sec := range secrets {
		values = append(values, sec.value)
		if sec.Agent || all {
			env = append(env, sec.Name+"="+sec.value)
		}
	}
	return env, values
}

// openSecret is a project's secret opened.
type openSecret struct {
	*ProjectSecret
	value string
}

// openSecrets reads and opens a project's secrets. One that does not open is a
// *SetupError: permanent (sealed under a key this hub no longer holds, or copied
// from another row), so the workspace fails in words rather than run without it.
func openSecrets(ctx context.Context, k kernel, q ProjectSecretQueries, projectID string) ([]openSecret, error) {
	list, err := q.ListProjectSecrets(ctx, projectID)
	if err != nil {
		return nil, fmt.Errorf("read the project's secrets: %w", err)
	}
	return openSecretList(k, list)
}

// openSecretList opens a project's secrets as read, as openSecrets does.
func openSecretList(k kernel, list []*ProjectSecret) ([]openSecret, error) {
	out := make([]openSecret, len(list))
	for i, sec := range list {
		plain, err := k.open(sec.SealedValue, SealedProjectSecret.binding(sec.ProjectID, sec.Name))
		if err != nil {
			return nil, &SetupError{StatusCode: FailureStatus(FailureSetup, ReasonEnvironmentInvalid),
				Detail: fmt.Sprintf("the project's secret %s could not be opened by this hub; an owner (in the app) or the operator must set it again", sec.Name), Err: err}
		}
		out[i] = openSecret{ProjectSecret: sec, value: plain}
	}
	return out, nil
}

// projectMask masks every secret value of the project.
func projectMask(ctx context.Context, k kernel, q ProjectSecretQueries, projectID string) (*Masker, error) {
	secrets, err := openSecrets(ctx, k, q, projectID)
	if err != nil {
		return nil, err
	}
	values := make([]string, len(secrets))
	for i, sec := range secrets {
		values[i] = sec.value
	}
	return NewMasker(values), nil
}
