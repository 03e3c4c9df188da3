package sandbox_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/payd-engine/payd/provider/sandbox"
	"github.com/payd-engine/payd/storage/sqlite"
)

// The sandbox keeps its tables through its own migration line, which the
// host that runs it gives to its store's Migrate beside the store's own.
func ExampleMigrations() {
	dir, err := os.MkdirTemp("", "payd")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(dir, "payd.db")) // the store's own line only
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	if err := store.CheckMigrations(ctx, sandbox.Migrations()); err != nil {
		fmt.Println("without the sandbox's line, a sandbox payd would refuse to start")
	}
	versions, err := store.Migrate(ctx, sandbox.Migrations())
	if err != nil {
		log.Fatal(err)
	}
	for _, v := range versions {
		fmt.Printf("%s: current %v\n", v.Line, len(v.Missing) == 0)
	}
	// Output:
	// without the sandbox's line, a sandbox payd would refuse to start
	// main: current true
	// sandbox: current true
}
