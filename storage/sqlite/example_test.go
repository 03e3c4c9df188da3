package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/payd-engine/payd/storage/sqlite"
)

// A host builds the store from its own handle on its own file, then
// migrates when it decides: here at once, with the store's own line only
// (a host passes each provider's line too: sandbox.Migrations(), ...).
func ExampleNew() {
	dir, err := os.MkdirTemp("", "payd")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := sql.Open("sqlite", filepath.Join(dir, "shop.db")) // modernc.org/sqlite
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	ctx := context.Background()
	store, err := sqlite.New(db) // no side effect
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close() // closes the store's own connections, not db
	if err := store.CheckMigrations(ctx); err != nil {
		fmt.Println("before Migrate, the schema is behind")
	}
	versions, err := store.Migrate(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, v := range versions {
		fmt.Printf("%s: current %v\n", v.Line, len(v.Missing) == 0)
	}
	// Output:
	// before Migrate, the schema is behind
	// main: current true
}
