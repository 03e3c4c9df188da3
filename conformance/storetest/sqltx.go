package storetest

import (
	"context"
	"testing"

	"github.com/payd-engine/payd/engine"
)

// A provider keeps its tables with its own SQL on the engine's
// transactions (engine.SQLTx): a store whose Tx is not one fails every
// provider group below; this says why, first.
func testSQLTxExposed(t *testing.T, s Store) {
	ctx := context.Background()
	for name, run := range map[string]func(context.Context, func(context.Context, engine.Tx) error) error{
		"InTx": s.InTx, "ReadTx": s.ReadTx,
	} {
		err := run(ctx, func(ctx context.Context, tx engine.Tx) error {
			st, ok := tx.(engine.SQLTx)
			if !ok {
				t.Fatalf("%s: the Tx (%T) is not an engine.SQLTx", name, tx)
			}
			if st.Dialect() == "" {
				t.Errorf("%s: Dialect is empty", name)
			}
			var n, rows int
			if err := st.QuerySQL(ctx, `SELECT 1`, nil, func(scan func(dest ...any) error) error {
				rows++
				return scan(&n)
			}); err != nil {
				return err
			}
			if rows != 1 || n != 1 {
				t.Errorf("%s: SELECT 1 read %d rows, %d", name, rows, n)
			}
			return nil
		})
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
