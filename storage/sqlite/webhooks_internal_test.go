package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// The delivery claim reads its candidates from the deliveries_due partial
// index, never by scanning deliveries; the window and the final order sort
// the due candidates only. The partial index is used only while the query
// spells its WHERE clause.
func TestClaimDeliveriesUsesDueIndex(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "payd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct{ exclude, fast int }{{0, 0}, {2, 0}, {0, 2}, {2, 2}} {
		args := []any{"w", 2, 1, 1}
		for range c.exclude {
			args = append(args, "whe_x")
		}
		for range c.fast {
			args = append(args, "whe_y")
		}
		if c.fast > 0 {
			args = append(args, 8)
		}
		args = append(args, 3, 5)
		plan := queryPlan(t, s.writer, claimDeliveriesQuery(c.exclude, c.fast), args...)
		if !strings.Contains(plan, "SEARCH d USING INDEX deliveries_due") || strings.Contains(plan, "SCAN d") ||
			strings.Contains(plan, "SCAN e") || strings.Contains(plan, "SCAN deliveries") {
			t.Errorf("delivery claim plan with %d excluded, %d fast:\n%s", c.exclude, c.fast, plan)
		}
	}
}
