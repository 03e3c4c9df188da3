package postgres_test

import (
	"context"
	"log"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payd-engine/payd/storage/postgres"
)

// A host builds the store on the pool it already has, configured as payd
// wants its connections (ConfigurePool), then migrates when it decides
// (a host passes each provider's line too: sandbox.Migrations(), ...).
func ExampleNew() {
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	postgres.ConfigurePool(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()

	store := postgres.New(pool) // no side effect; Close leaves pool open
	if _, err := store.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
}
