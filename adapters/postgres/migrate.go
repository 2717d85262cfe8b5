package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/wshub/wshub/migrations"
)

// Migrate applies every pending migration of the embedded set. A PostgreSQL advisory
// lock held for the whole run (goose's session locker) makes replicas that start
// together migrate one after the other: the second finds nothing pending.
func Migrate(ctx context.Context, db *sql.DB) error {
	// Waiting replicas try again every second, for up to five minutes (goose's default
	// polls every 5 s, which would hold every replica's start back that long).
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, 300))
	if err != nil {
		return fmt.Errorf("migrations lock: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS, goose.WithSessionLocker(locker))
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}
