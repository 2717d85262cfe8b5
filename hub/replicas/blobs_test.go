package replicas_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/s3test"
)

// s3Config points c at srv's bucket, under a prefix as a shared bucket would be.
func s3Config(srv *s3test.Server) func(*hub.Config) {
	return func(c *hub.Config) {
		c.Blobs = hub.BlobsS3
		c.S3Endpoint, c.S3Bucket, c.S3Region = srv.Endpoint, srv.Bucket, s3test.Region
		c.S3AccessKeyID, c.S3SecretAccessKey = srv.AccessKeyID, srv.SecretAccessKey
		c.S3Prefix = "wshub/"
	}
}

// With WSHUB_BLOBS=postgres or s3, hubs that share a database and no disk share
// attachments: a file uploaded to one replica reaches the agent of a turn run by
// another, and a file uploaded there is read here. Neither data directory holds any
// attachment; the store holds both.
func TestSharedBlobStoresServeAttachmentsAcrossReplicasWithNoSharedDisk(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// store sets the blob store up for t: the configuration that selects it, and
		// a count of the values it holds.
		store func(t *testing.T) (configure func(*hub.Config), stored func(t *testing.T, h *hubtest.Hub) int)
	}{
		{"postgres", func(t *testing.T) (func(*hub.Config), func(*testing.T, *hubtest.Hub) int) {
			return func(c *hub.Config) { c.Blobs = hub.BlobsPostgres }, func(t *testing.T, h *hubtest.Hub) int {
				var n int
				if err := h.PG().DB().Get(&n, `SELECT count(*) FROM blobs`); err != nil {
					t.Fatalf("count the blobs table: %v", err)
				}
				return n
			}
		}},
		{"s3", func(t *testing.T) (func(*hub.Config), func(*testing.T, *hubtest.Hub) int) {
			srv := s3test.Start(t)
			return s3Config(srv), func(t *testing.T, _ *hubtest.Hub) int { return len(srv.Keys(t, srv.Bucket, "wshub/")) }
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			configure, stored := tt.store(t)
			attachmentsAcrossReplicas(t, configure, stored)
		})
	}
}

func attachmentsAcrossReplicas(t *testing.T, configure func(*hub.Config), stored func(*testing.T, *hubtest.Hub) int) {
	h := hubtest.StartRuntime(t, hubtest.WithConfig(configure))
	other := h.Beside(t, func(c *hub.Config) { c.DataDir = t.TempDir() })
	id := hubtest.CreateWorkspace(t, h, "")

	// Uploaded to the other replica; the turn runs on this one, where the checkout is.
	up := other.Call("POST", "/v1/api/workspaces/"+id+"/attachments", other.Key, []byte("line of notes"),
		"Content-Type", "text/plain", "X-Service-File-Name", "notes.txt").Expect(t, 201, "")
	assetID := up.Body["asset"].(map[string]any)["assetId"].(string)
	h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{"text": "attachments", "attachments": []string{assetID}}).Expect(t, 200, "")
	hubtest.WaitFor(t, h, id, "idle", hubtest.IdleAfterTurns(1))
	msgs, _ := hubtest.Messages(t, h, id)
	if want := ".context/files/" + assetID + "-notes.txt=line of notes"; msgs[len(msgs)-1].Text != want {
		t.Fatalf("expected the agent here to read %q uploaded to the other replica, got %q", want, msgs[len(msgs)-1].Text)
	}

	// Uploaded here, read by the other replica.
	up = h.Call("POST", "/v1/api/workspaces/"+id+"/attachments", h.Key, []byte("second file"),
		"Content-Type", "text/plain", "X-Service-File-Name", "second.txt").Expect(t, 201, "")
	second := up.Body["asset"].(map[string]any)["assetId"].(string)
	assets, err := other.PG().AssetsByID(context.Background(), id, []string{second})
	if err != nil || len(assets) != 1 {
		t.Fatalf("expected the asset's row, got %d (%v)", len(assets), err)
	}
	if got, err := other.Service.Admin.ReadAttachment(context.Background(), assets[0]); err != nil || string(got) != "second file" {
		t.Fatalf("expected the other replica to read %q, got %q (%v)", "second file", got, err)
	}

	if n := stored(t, h); n != 2 {
		t.Fatalf("expected both attachments in the store, got %d", n)
	}
	for _, dir := range []string{h.Config.DataDir, other.Config.DataDir} {
		if _, err := os.Stat(filepath.Join(dir, "assets")); !os.IsNotExist(err) {
			t.Errorf("expected no assets directory under %s, got %v", dir, err)
		}
	}
}

// WSHUB_BLOBS names a store that is built, or the hub does not start: from the
// environment and from a Config built in code.
func TestAnUnknownBlobStoreIsRefused(t *testing.T) {
	t.Setenv("WSHUB_BLOBS", "")
	if c, err := hub.LoadConfig(); err != nil || c.Blobs != hub.BlobsFile {
		t.Fatalf("expected the file store by default, got %q (%v)", c.Blobs, err)
	}
	for _, name := range []string{"S3", "Postgres", "disk"} {
		t.Setenv("WSHUB_BLOBS", name)
		if _, err := hub.LoadConfig(); err == nil || !strings.Contains(err.Error(), `WSHUB_BLOBS: unknown blob store "`+name+`" (known: file, postgres, s3)`) {
			t.Fatalf("expected WSHUB_BLOBS=%s refused naming the known stores, got %v", name, err)
		}
	}
	store, dbURL := pgtest.NewStore(t)
	cfg := hub.Config{DatabaseURL: dbURL, DataDir: t.TempDir(), AgentCommands: map[string]string{}, Blobs: "gcs"}
	if _, err := hub.New(cfg, store, nil, hub.Options{Admin: true}); err == nil || !strings.Contains(err.Error(), `unknown blob store "gcs"`) {
		t.Fatalf("expected the blob store gcs refused, got %v", err)
	}
}

// The WSHUB_S3_* settings are read and checked with the configuration, before any
// connection: each missing or wrong one is named. Credentials come from the variable
// or from a file (_FILE, less its newline), not both.
func TestS3SettingsAreCheckedWithTheConfiguration(t *testing.T) {
	dir := t.TempDir()
	keyFile, secretFile := filepath.Join(dir, "key"), filepath.Join(dir, "secret")
	for path, content := range map[string]string{keyFile: "AKFROMFILE\n", secretFile: "from-file\n"} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	good := map[string]string{
		"DATABASE_URL": "postgres://unused", "WSHUB_BLOBS": "s3",
		"WSHUB_S3_ENDPOINT": "https://s3.eu-west-1.amazonaws.com", "WSHUB_S3_BUCKET": "attachments",
		"WSHUB_S3_REGION": "eu-west-1", "WSHUB_S3_ACCESS_KEY_ID": "AKEXAMPLE", "WSHUB_S3_SECRET_ACCESS_KEY": "secret",
		"WSHUB_S3_ACCESS_KEY_ID_FILE": "", "WSHUB_S3_SECRET_ACCESS_KEY_FILE": "", "WSHUB_S3_PREFIX": "",
	}
	tests := []struct {
		name string
		set  map[string]string
		want string // "": accepted
	}{
		{"every setting", nil, ""},
		{"credentials from files", map[string]string{"WSHUB_S3_ACCESS_KEY_ID": "", "WSHUB_S3_SECRET_ACCESS_KEY": "",
			"WSHUB_S3_ACCESS_KEY_ID_FILE": keyFile, "WSHUB_S3_SECRET_ACCESS_KEY_FILE": secretFile}, ""},
		{"no region", map[string]string{"WSHUB_S3_REGION": ""}, ""},
		{"a prefix", map[string]string{"WSHUB_S3_PREFIX": "wshub/"}, ""},
		{"http to loopback", map[string]string{"WSHUB_S3_ENDPOINT": "http://127.0.0.1:9000"}, ""},
		{"no bucket", map[string]string{"WSHUB_S3_BUCKET": ""}, "WSHUB_BLOBS=s3 needs WSHUB_S3_BUCKET"},
		{"nothing", map[string]string{"WSHUB_S3_ENDPOINT": "", "WSHUB_S3_BUCKET": "", "WSHUB_S3_ACCESS_KEY_ID": "", "WSHUB_S3_SECRET_ACCESS_KEY": ""},
			"WSHUB_BLOBS=s3 needs WSHUB_S3_ENDPOINT, WSHUB_S3_BUCKET, WSHUB_S3_ACCESS_KEY_ID, WSHUB_S3_SECRET_ACCESS_KEY"},
		{"no secret", map[string]string{"WSHUB_S3_SECRET_ACCESS_KEY": ""}, "needs WSHUB_S3_SECRET_ACCESS_KEY"},
		{"a secret twice", map[string]string{"WSHUB_S3_SECRET_ACCESS_KEY_FILE": secretFile},
			"WSHUB_S3_SECRET_ACCESS_KEY and WSHUB_S3_SECRET_ACCESS_KEY_FILE are both set"},
		{"a secret file that is not there", map[string]string{"WSHUB_S3_SECRET_ACCESS_KEY": "", "WSHUB_S3_SECRET_ACCESS_KEY_FILE": filepath.Join(dir, "none")},
			"WSHUB_S3_SECRET_ACCESS_KEY_FILE"},
		{"http to another host", map[string]string{"WSHUB_S3_ENDPOINT": "http://minio.internal:9000"},
			"WSHUB_S3_ENDPOINT: endpoint \"http://minio.internal:9000\": http is allowed to a loopback host only"},
		{"no scheme", map[string]string{"WSHUB_S3_ENDPOINT": "s3.eu-west-1.amazonaws.com"}, "WSHUB_S3_ENDPOINT: endpoint"},
		{"the bucket in the endpoint", map[string]string{"WSHUB_S3_ENDPOINT": "https://s3.example.com/attachments"}, "no path, query or fragment"},
		{"a prefix from the root", map[string]string{"WSHUB_S3_PREFIX": "/wshub"}, "WSHUB_S3_PREFIX"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range good {
				t.Setenv(k, v)
			}
			for k, v := range tt.set {
				t.Setenv(k, v)
			}
			c, err := hub.LoadConfig()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("LoadConfig: expected no error, got %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("LoadConfig: expected an error saying %q, got %v", tt.want, err)
			case err != nil && (strings.Contains(err.Error(), "from-file") || strings.Contains(err.Error(), "secret\"")):
				t.Fatalf("LoadConfig: expected the error not to show a secret, got %v", err)
			}
			if tt.want == "" && c.Blobs != hub.BlobsS3 {
				t.Fatalf("LoadConfig: expected WSHUB_BLOBS=s3, got %q", c.Blobs)
			}
		})
	}
}

// With WSHUB_BLOBS=s3 the hub starts only when the bucket answers: a missing bucket,
// and credentials the server refuses, stop it with the setting to look at. The
// credentials may come from files.
func TestS3BlobsAreCheckedAtStart(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	store, dbURL := pgtest.NewStore(t)
	secretFile := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secretFile, []byte(srv.SecretAccessKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func(*hub.Config)
		want []string // none: the hub starts
	}{
		{"the bucket", func(c *hub.Config) {}, nil},
		{"the secret from a file's content", func(c *hub.Config) {
			// As LoadConfig reads WSHUB_S3_SECRET_ACCESS_KEY_FILE: the file's content.
			data, _ := os.ReadFile(secretFile)
			c.S3SecretAccessKey, c.S3SecretAccessKeyFile = "", string(data)
		}, nil},
		{"a missing bucket", func(c *hub.Config) { c.S3Bucket = "wshub-missing" },
			[]string{`bucket "wshub-missing" at ` + srv.Endpoint, "the bucket does not exist", "NoSuchBucket", "correct WSHUB_S3_BUCKET"}},
		{"a wrong secret", func(c *hub.Config) { c.S3SecretAccessKey += "x" },
			[]string{"refused the credentials", "SignatureDoesNotMatch", "check WSHUB_S3_ACCESS_KEY_ID and WSHUB_S3_SECRET_ACCESS_KEY"}},
		{"an unknown access key", func(c *hub.Config) { c.S3AccessKeyID = "AKNOBODY" },
			[]string{"refused the credentials", "InvalidAccessKeyId", "check WSHUB_S3_ACCESS_KEY_ID"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := hub.Config{DatabaseURL: dbURL, DataDir: t.TempDir(), AgentCommands: map[string]string{}}
			s3Config(srv)(&cfg)
			tt.edit(&cfg)
			_, err := hub.New(cfg, store, nil, hub.Options{Admin: true})
			if tt.want == nil && err != nil {
				t.Fatalf("New: expected the hub to start, got %v", err)
			}
			for _, want := range tt.want {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("New: expected an error saying %q, got %v", want, err)
				}
			}
		})
	}
	if keys := srv.Keys(t, srv.Bucket, ""); len(keys) != 0 {
		t.Errorf("keys: expected the start-up check to write nothing, got %v", keys)
	}
	if ok, err := srv.Client.BucketExists(context.Background(), "wshub-missing"); err != nil || ok {
		t.Errorf("bucket wshub-missing: expected the hub not to have made it, got exists=%v (%v)", ok, err)
	}
}
