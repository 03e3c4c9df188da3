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
	for _, exclude := range []int{0, 2} {
		args := []any{"w", 2, 1, 1}
		for range exclude {
			args = append(args, "whe_x")
		}
		args = append(args, 3, 5)
		plan := queryPlan(t, s.writer, claimDeliveriesQuery(exclude), args...)
		if !strings.Contains(plan, "SEARCH d USING INDEX deliveries_due") || strings.Contains(plan, "SCAN d") ||
			strings.Contains(plan, "SCAN e") || strings.Contains(plan, "SCAN deliveries") {
			t.Errorf("delivery claim plan with %d excluded:\n%s", exclude, plan)
		}
	}
}
