// Package kubetest runs a real Kubernetes API server for tests: etcd plus
// kube-apiserver, with no kubelet, scheduler or controller manager (the
// arrangement controller-runtime calls envtest). Objects can be created, read,
// watched and have their status updated, but nothing acts on them: a test that
// needs a Pod to be Running sets its status itself, playing the kubelet.
//
// The binaries come from `bash scripts/kube.sh`, which builds kube-apiserver
// from the Go module proxy and installs etcd. Tests skip when they are missing.
//
// Differences from a real cluster worth knowing:
//   - The ServiceAccount admission plugin is disabled: it rejects Pods until
//     the controller manager has created the namespace's "default"
//     ServiceAccount, which never happens here. Pods therefore get no
//     service-account token volume.
//   - Namespaces are never finalized after deletion (no namespace controller),
//     and nothing garbage-collects owned objects.
package kubetest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wshub/wshub/internal/testkit/enginetest"
	"k8s.io/client-go/rest"
)

// Version is the Kubernetes release scripts/kube.sh builds by default; its
// cache directory is searched first.
const Version = "v1.37.2"

// Environment variables naming the binaries; they override the cache and PATH.
const (
	EnvAPIServer = "WSHUB_KUBE_APISERVER"
	EnvEtcd      = "WSHUB_ETCD"
)

// startTimeout bounds the wait for each process to become ready. A cold
// kube-apiserver takes a few seconds (bootstrap RBAC roles, priority levels).
const startTimeout = 90 * time.Second

// Cluster is a running etcd + kube-apiserver pair, stopped by t.Cleanup.
type Cluster struct {
	// Config authenticates as "admin" in group system:masters, which
	// bypasses RBAC. Copy it (rest.CopyConfig) before changing it.
	Config *rest.Config
	// Host is the API server URL, https://127.0.0.1:<port>.
	Host string
	// CAData is the PEM certificate the API server presents (self-signed).
	CAData []byte
	// AdminToken is the bearer token behind Config.
	AdminToken string
}

// Start starts etcd and kube-apiserver on free loopback ports and waits until
// the API server is ready. It skips the test if the binaries are not
// installed, and fails it if they are configured but do not work.
func Start(t testing.TB) *Cluster {
	t.Helper()
	apiserver, etcd := binaries(t)
	started := time.Now()
	dir := t.TempDir()

	crt, key, err := enginetest.SelfSignedCert("kubetest")
	if err != nil {
		t.Fatalf("kubetest: %v", err)
	}
	pair, err := tls.X509KeyPair(crt, key)
	if err != nil {
		t.Fatalf("kubetest: %v", err)
	}
	saKey, saPub, err := serviceAccountKey()
	if err != nil {
		t.Fatalf("kubetest: %v", err)
	}
	token := enginetest.RandomHex(t, 24)
	files := map[string][]byte{
		"tls.crt": crt,
		"tls.key": key,
		"sa.key":  saKey,
		"sa.pub":  saPub,
		// token,user,uid,"groups"
		"tokens.csv": []byte(token + `,admin,admin,"system:masters"` + "\n"),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatalf("kubetest: %v", err)
		}
	}
	path := func(name string) string { return filepath.Join(dir, name) }
	// One self-signed certificate serves everything: etcd's client and peer
	// ports, etcd's client authentication of kube-apiserver, and the API
	// server's own port. Mutual TLS keeps etcd private even though it listens
	// on loopback, where other local users could reach it.
	tlsFlags := []string{"--cert-file=" + path("tls.crt"), "--key-file=" + path("tls.key"),
		"--trusted-ca-file=" + path("tls.crt"), "--client-cert-auth"}
	peerFlags := []string{"--peer-cert-file=" + path("tls.crt"), "--peer-key-file=" + path("tls.key"),
		"--peer-trusted-ca-file=" + path("tls.crt"), "--peer-client-cert-auth"}

	var etcdURL string
	etcdFlags := slices.Concat(tlsFlags, peerFlags)
	if oldEtcd(t, etcd) {
		// kube-apiserver's watch cache asks etcd for progress notifications
		// to learn it is up to date, but only from etcd 3.5.13 on. With an
		// older etcd (Debian bookworm has 3.4.23) a watch or list of a
		// resource nobody wrote to lately times out ("Too large resource
		// version") unless etcd sends them unasked, often.
		etcdFlags = append(etcdFlags, "--experimental-watch-progress-notify-interval=200ms")
	}
	// The ports are picked anew for each attempt of startProcess.
	startProcess(t, dir, "etcd", func() (*exec.Cmd, func() error) {
		client, peer := enginetest.FreePort(t), enginetest.FreePort(t)
		etcdURL = "https://127.0.0.1:" + client
		peerURL := "https://127.0.0.1:" + peer
		args := append([]string{
			"--name=kubetest",
			"--data-dir=" + path("etcd"),
			"--listen-client-urls=" + etcdURL, "--advertise-client-urls=" + etcdURL,
			"--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
			"--initial-cluster=kubetest=" + peerURL,
			"--logger=zap", "--log-level=warn",
		}, etcdFlags...)
		cmd := exec.Command(etcd, args...)
		return cmd, func() error { return httpReady(etcdURL+"/health", crt, &pair, "") }
	})

	var host string
	startProcess(t, dir, "kube-apiserver", func() (*exec.Cmd, func() error) {
		port := enginetest.FreePort(t)
		host = "https://127.0.0.1:" + port
		cmd := exec.Command(apiserver,
			"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--secure-port="+port,
			"--tls-cert-file="+path("tls.crt"), "--tls-private-key-file="+path("tls.key"),
			"--etcd-servers="+etcdURL, "--etcd-cafile="+path("tls.crt"),
			"--etcd-certfile="+path("tls.crt"), "--etcd-keyfile="+path("tls.key"),
			"--token-auth-file="+path("tokens.csv"),
			"--authorization-mode=RBAC",
			"--service-account-key-file="+path("sa.pub"),
			"--service-account-signing-key-file="+path("sa.key"),
			"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
			"--service-cluster-ip-range=10.0.0.0/24",
			"--allow-privileged=true",
			// The default reconciler publishes the advertise address as the
			// "kubernetes" Service's endpoints and refuses loopback ones.
			"--endpoint-reconciler-type=none",
			// See the package comment.
			"--disable-admission-plugins=ServiceAccount",
		)
		return cmd, func() error { return httpReady(host+"/readyz", crt, nil, token) }
	})
	t.Logf("kubetest: etcd and kube-apiserver ready at %s in %v", host, time.Since(started).Round(time.Millisecond))

	return &Cluster{
		Config: &rest.Config{
			Host:            host,
			BearerToken:     token,
			TLSClientConfig: rest.TLSClientConfig{CAData: crt},
		},
		Host:       host,
		CAData:     crt,
		AdminToken: token,
	}
}

// TokenConfig returns a copy of c.Config that authenticates with token
// instead, e.g. a service-account token from the TokenRequest API, to test
// RBAC as a non-admin.
func (c *Cluster) TokenConfig(token string) *rest.Config {
	cfg := rest.CopyConfig(c.Config)
	cfg.BearerToken = token
	return cfg
}

// Kubeconfig writes a kubeconfig file for the admin (for kubectl or code that
// takes a path) into a temporary directory and returns its path.
func (c *Cluster) Kubeconfig(t testing.TB) string {
	t.Helper()
	// JSON is YAML, so %q gives safe quoting without a YAML dependency.
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: kubetest
  cluster:
    server: %q
    certificate-authority-data: %q
users:
- name: admin
  user:
    token: %q
contexts:
- name: kubetest
  context:
    cluster: kubetest
    user: admin
current-context: kubetest
`, c.Host, base64.StdEncoding.EncodeToString(c.CAData), c.AdminToken)
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatalf("kubetest: %v", err)
	}
	return p
}

// binaries finds kube-apiserver and etcd, or skips the test.
func binaries(t testing.TB) (apiserver, etcd string) {
	t.Helper()
	const hint = "run `bash scripts/kube.sh` to build/install them, then set " +
		EnvAPIServer + " and " + EnvEtcd + " or leave them unset to use its cache and PATH"
	apiserver = find(t, EnvAPIServer, "kube-apiserver", cachedAPIServers()...)
	etcd = find(t, EnvEtcd, "etcd", "/usr/bin/etcd")
	var missing []string
	for name, p := range map[string]string{"kube-apiserver": apiserver, "etcd": etcd} {
		if p == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		t.Skipf("kubetest: %s not found; %s", strings.Join(missing, " and "), hint)
	}
	return apiserver, etcd
}

// find returns the binary named by env (failing the test if it is set but
// unusable: an explicit setting should not silently turn into a skip), else
// the first executable candidate, else name on PATH, else "".
func find(t testing.TB, env, name string, candidates ...string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		if !enginetest.Executable(p) {
			t.Fatalf("kubetest: %s=%s is not an executable file", env, p)
		}
		return p
	}
	for _, p := range candidates {
		if enginetest.Executable(p) {
			return p
		}
	}
	p, _ := exec.LookPath(name)
	return p
}

// cachedAPIServers lists scripts/kube.sh's cache entries, found by walking up
// from the package directory (where go test runs) to the one holding .cache:
// Version first, then other versions, newest name first.
func cachedAPIServers() []string {
	if cache := os.Getenv("WSHUB_KUBE_CACHE"); cache != "" {
		return cachedIn(cache)
	}
	if user, err := os.UserCacheDir(); err == nil {
		if found := cachedIn(filepath.Join(user, "wshub", "kube")); len(found) > 1 {
			return found
		}
	}
	// Older runs of scripts/kube.sh cached in the work tree.
	dir, err := os.Getwd()
	if err != nil {
		return nil
	}
	for {
		cache := filepath.Join(dir, ".cache", "kube")
		if fi, err := os.Stat(cache); err == nil && fi.IsDir() {
			return cachedIn(cache)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil
		}
		dir = parent
	}
}

// cachedIn lists the kube-apiservers of one cache directory, Version first.
func cachedIn(cache string) []string {
	found, _ := filepath.Glob(filepath.Join(cache, "*", "kube-apiserver"))
	sort.Sort(sort.Reverse(sort.StringSlice(found)))
	return append([]string{filepath.Join(cache, Version, "kube-apiserver")}, found...)
}

// oldEtcd reports whether the etcd binary is older than 3.5.13.
func oldEtcd(t testing.TB, etcd string) bool {
	t.Helper()
	out, err := exec.Command(etcd, "--version").Output()
	if err != nil {
		t.Fatalf("kubetest: %s --version: %v", etcd, err)
	}
	// "etcd Version: 3.4.23"
	var major, minor, patch int
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "etcd Version: "); ok {
			if _, err := fmt.Sscanf(v, "%d.%d.%d", &major, &minor, &patch); err != nil {
				t.Fatalf("kubetest: cannot parse etcd version %q", v)
			}
		}
	}
	if major != 3 {
		t.Fatalf("kubetest: unexpected etcd version output %q", out)
	}
	return minor < 5 || minor == 5 && patch < 13
}

// startProcess starts the command made by newCmd, with output to
// dir/name.log, polls its ready func until it succeeds, and registers a
// cleanup that stops the process. It makes up to three attempts, as the
// process may lose its port to someone else between FreePort and bind.
func startProcess(t testing.TB, dir, name string, newCmd func() (*exec.Cmd, func() error)) {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	var err error
	for attempt := 1; attempt <= 3; attempt++ {
		cmd, ready := newCmd()
		logFile, ferr := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if ferr != nil {
			t.Fatalf("kubetest: %v", ferr)
		}
		cmd.Stdout, cmd.Stderr = logFile, logFile
		cmd.SysProcAttr = &syscall.SysProcAttr{}
		enginetest.KillWithParent(cmd.SysProcAttr)
		err = cmd.Start()
		logFile.Close() // the child has its own copy
		if err != nil {
			t.Fatalf("kubetest: start %s: %v", name, err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		stop := func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(15 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
			}
		}

		if err = waitReady(ready, exited); err == nil {
			t.Cleanup(stop)
			return
		}
		stop()
		if !strings.Contains(enginetest.Tail(logPath), "address already in use") {
			break
		}
		t.Logf("kubetest: %s lost its port (attempt %d): %v", name, attempt, err)
	}
	t.Fatalf("kubetest: could not start %s: %v\n%s", name, err, enginetest.Tail(logPath))
}

// waitReady polls ready until it succeeds, the process exits or startTimeout
// passes.
func waitReady(ready func() error, exited <-chan struct{}) error {
	deadline := time.Now().Add(startTimeout)
	for {
		err := ready()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("exited before it was ready: %w", err)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %v: %w", startTimeout, err)
		}
	}
}

// httpReady reports whether url answers 200 over TLS verified against caPEM,
// presenting cert (etcd requires a client certificate) and token if set.
func httpReady(url string, caPEM []byte, cert *tls.Certificate, token string) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	cfg := &tls.Config{RootCAs: pool}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	buf := make([]byte, 512)
	n, _ := resp.Body.Read(buf)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", url, resp.Status, strings.TrimSpace(string(buf[:n])))
	}
	return nil
}

// serviceAccountKey returns a PEM private key for signing service-account
// tokens and its PEM public key for verifying them.
func serviceAccountKey() (keyPEM, pubPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), nil
}
