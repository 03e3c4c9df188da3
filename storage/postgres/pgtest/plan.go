package pgtest

import (
	"encoding/json"
	"testing"
)

// PlanReads walks an EXPLAIN (ANALYZE, FORMAT JSON): the rows the statement
// returned, and the rows of table that its scans read (returned or
// filtered out) other than through exceptIndex ("" for none). The plan
// tests hold a statement to what it reads with it.
func PlanReads(t testing.TB, plan []byte, table, exceptIndex string) (returned, read int) {
	t.Helper()
	type node struct {
		NodeType       string  `json:"Node Type"`
		Relation       string  `json:"Relation Name"`
		Index          string  `json:"Index Name"`
		Rows           float64 `json:"Actual Rows"`
		Loops          float64 `json:"Actual Loops"`
		RemovedFilter  float64 `json:"Rows Removed by Filter"`
		RemovedRecheck float64 `json:"Rows Removed by Index Recheck"`
		Plans          []node  `json:"Plans"`
	}
	var out []struct{ Plan node }
	if err := json.Unmarshal(plan, &out); err != nil || len(out) != 1 {
		t.Fatalf("plan %s: %v", plan, err)
	}
	var walk func(n node)
	walk = func(n node) {
		if n.Relation == table && n.NodeType != "ModifyTable" && (exceptIndex == "" || n.Index != exceptIndex) {
			read += int(n.Rows*n.Loops + n.RemovedFilter + n.RemovedRecheck)
		}
		for _, c := range n.Plans {
			walk(c)
		}
	}
	walk(out[0].Plan)
	return int(out[0].Plan.Rows), read
}
