// Package migrations embeds the goose SQL migrations of the hub's database.
package migrations

import "embed"

// FS holds the migration files, applied in name order by goose.
//
//go:embed *.sql
var FS embed.FS
