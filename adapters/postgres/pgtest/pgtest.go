// Package pgtest gives each test its own PostgreSQL database, cloned from a template
// built once from the migrations and named by their hash, so a change of migrations
// builds a new template and parallel test binaries share one.
package pgtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	_ "github.com/lib/pq"

	"github.com/wshub/wshub/adapters/postgres"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/migrations"
)

// NewStore returns a store on a fresh database for t, dropped when t ends, and its URL.
func NewStore(t testing.TB) (*postgres.Store, string) {
	t.Helper()
	dbURL := NewDatabase(t)
	ctx := context.Background()
	store, err := postgres.Open(ctx, dbURL, postgres.Options{MaxOpenConns: 30})
	if err != nil {
		t.Fatalf("open test store: %v", err)
	}
	t.Cleanup(func() { store.Close() })
	return store, dbURL
}

// NewDatabase creates a database from the migrated template and returns its URL.
func NewDatabase(t testing.TB) string {
	t.Helper()
	return createDatabase(t, true)
}

// NewEmptyDatabase creates a database with no tables (migration tests) and returns its URL.
func NewEmptyDatabase(t testing.TB) string {
	t.Helper()
	return createDatabase(t, false)
}

// createDatabase makes a database for t, dropped when t ends: a copy of the migrated
// template, or empty.
func createDatabase(t testing.TB, migrated bool) string {
	t.Helper()
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		t.Fatalf("DATABASE_URL is not set: run the tests with `make test`, which starts PostgreSQL")
	}
	ctx := context.Background()
	admin, err := sql.Open("postgres", base)
	if err != nil {
		t.Fatalf("open admin connection: %v", err)
	}
	defer admin.Close()
	create := `CREATE DATABASE %s`
	if migrated {
		tmpl, err := ensureTemplate(ctx, admin, base)
		if err != nil {
			t.Fatalf("template database: %v", err)
		}
		create += " TEMPLATE " + tmpl
	}
	name := fmt.Sprintf("wshub_test_%d_%s", time.Now().UnixNano(), core.NewID(rand.Reader, "")[:6])
	name = strings.ToLower(name)
	for attempt := 0; ; attempt++ {
		_, err = admin.ExecContext(ctx, fmt.Sprintf(create, name))
		// The template is briefly "being accessed" while another binary finishes with it.
		if err == nil || attempt > 50 || !strings.Contains(err.Error(), "being accessed") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		admin, err := sql.Open("postgres", base)
		if err != nil {
			return
		}
		defer admin.Close()
		_, _ = admin.ExecContext(context.Background(), fmt.Sprintf(`DROP DATABASE IF EXISTS %s WITH (FORCE)`, name))
	})
	return withDatabase(base, name)
}

// ensureTemplate builds wshub_tmpl_<hash> once, under an advisory lock shared by every
// test binary that runs at the same time.
func ensureTemplate(ctx context.Context, admin *sql.DB, base string) (string, error) {
	name := "wshub_tmpl_" + migrationsHash()
	conn, err := admin.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(727274)`); err != nil {
		return "", err
	}
	defer conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock(727274)`)
	var exists bool
	if err := conn.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return "", err
	}
	if exists {
		return name, nil
	}
	building := name + "_build"
	_, _ = conn.ExecContext(ctx, fmt.Sprintf(`DROP DATABASE IF EXISTS %s WITH (FORCE)`, building))
	if _, err := conn.ExecContext(ctx, fmt.Sprintf(`CREATE DATABASE %s`, building)); err != nil {
		return "", err
	}
	db, err := sql.Open("postgres", withDatabase(base, building))
	if err != nil {
		return "", err
	}
	err = postgres.Migrate(ctx, db)
	db.Close()
	if err != nil {
		return "", err
	}
	// Renamed only once complete, so a crashed build never leaves a half template.
	if _, err := conn.ExecContext(ctx, fmt.Sprintf(`ALTER DATABASE %s RENAME TO %s`, building, name)); err != nil {
		return "", err
	}
	return name, nil
}

func migrationsHash() string {
	h := sha256.New()
	_ = fs.WalkDir(migrations.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := migrations.FS.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%s\x00", path, b)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:12]
}

func withDatabase(base, name string) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	u.Path = "/" + name
	return u.String()
}
