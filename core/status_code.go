package core

import "strings"

// Codes that carry data are built and read here only: a workspace's statusCode when it
// failed ("setup_failed:base_ref_not_found") or became ready with a caveat
// ("ready:mirror_fetch_failed"), and the wire error cloud_branch_in_use:<workspaceId>.
// Adapters mint them with these constructors; front-ends read them with the parsers.

// FailureKind is the part of a failed workspace's statusCode before ":".
type FailureKind string

// Why a workspace failed.
const (
	FailureProvision   FailureKind = "provision_failed" // its machine could not be provisioned
	FailureSetup       FailureKind = "setup_failed"     // its checkout could not be set up
	FailureMachineLost FailureKind = "machine_lost"     // its machine was lost (resume found nothing)
)

// FailureReason is the part after ":" (optional).
type FailureReason string

// The reasons a provider or the runtime gives.
const (
	ReasonDisk            FailureReason = "disk"               // provision: the host could not make room
	ReasonProjectNotReady FailureReason = "project_not_ready"  // setup: the project has no mirror
	ReasonBaseRefNotFound FailureReason = "base_ref_not_found" // setup: baseRef is no branch, tag or commit
	ReasonCheckout        FailureReason = "checkout"           // setup: git refused the checkout
	// ReasonRuntimeUnreachable: a remote machine was started again and again and its
	// runtime never reached the hub.
	ReasonRuntimeUnreachable FailureReason = "runtime_unreachable"
	// Reasons a cluster gives for not running a workspace's machine (kubernetes).
	ReasonUnschedulable FailureReason = "unschedulable" // no node can take the Pod
	ReasonImagePull     FailureReason = "image_pull"    // the runtime's image cannot be pulled
	ReasonOOMKilled     FailureReason = "oom_killed"    // the machine ran out of memory
	// Reasons of a project's environment (environment.go, env_setup.go).
	ReasonEnvironmentInvalid FailureReason = "environment_invalid" // its file or settings cannot be used
	ReasonSetupScript        FailureReason = "setup_script"        // its setup script failed
	ReasonSetupTimeout       FailureReason = "setup_timeout"       // its setup script ran out of time
	ReasonImageRefused       FailureReason = "image_refused"       // the image it names is not allowed here
)

// FailureStatus builds a failed workspace's statusCode.
func FailureStatus(kind FailureKind, reason FailureReason) string {
	if reason == "" {
		return string(kind)
	}
	return string(kind) + ":" + string(reason)
}

// ParseFailureStatus reads a statusCode built by FailureStatus.
func ParseFailureStatus(code string) (FailureKind, FailureReason) {
	kind, reason, _ := strings.Cut(code, ":")
	return FailureKind(kind), FailureReason(reason)
}

// StatusMirrorStale is the statusCode of a workspace that became ready from its
// project's mirror as it was, because fetching the repository failed.
const StatusMirrorStale = string(StateReady) + ":mirror_fetch_failed"

// BaseErrorCode is an error code without the data some carry
// (cloud_branch_in_use:<workspaceId> gives cloud_branch_in_use).
func BaseErrorCode(code string) string {
	base, _, _ := strings.Cut(code, ":")
	return base
}

// BranchInUse builds the 409 whose code carries the workspace that holds the branch.
func BranchInUse(workspaceID string) *Error {
	return &Error{Code: CodeBranchInUse + ":" + workspaceID, Detail: "the branch is already used by another workspace of this project"}
}
