package model

import (
	"sort"
	"time"
)

// Lists (docs/lists.md): an organization's deposits
// and withdrawals newest first, only its own, filtered by status and
// payment method. open: the documents say "newest first"; among items
// created at the same microsecond the model orders by ID, descending (the
// engine's keyset is (created_at, id)).

// ListFilter is what a list request filters on; empty matches all.
type ListFilter struct{ Status, Method string }

type listed struct {
	id string
	at time.Time
}

func newestFirst(items []listed) []string {
	sort.Slice(items, func(i, j int) bool {
		a, b := items[i], items[j]
		if !a.at.Equal(b.at) {
			return a.at.After(b.at)
		}
		return a.id > b.id
	})
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.id
	}
	return ids
}

// ListDeposits returns the IDs of orgID's deposits that match f, newest
// first.
func (m *Model) ListDeposits(orgID string, f ListFilter) []string {
	var items []listed
	for _, d := range m.Deposits {
		if d.OrgID == orgID && (f.Status == "" || d.Status == f.Status) && (f.Method == "" || d.Method == f.Method) {
			items = append(items, listed{d.ID, d.CreatedAt.Truncate(time.Microsecond)})
		}
	}
	return newestFirst(items)
}

// ListWithdrawals returns the IDs of orgID's withdrawals that match f,
// newest first.
func (m *Model) ListWithdrawals(orgID string, f ListFilter) []string {
	var items []listed
	for _, w := range m.Withdrawals {
		if w.OrgID == orgID && (f.Status == "" || w.Status == f.Status) && (f.Method == "" || w.Method == f.Method) {
			items = append(items, listed{w.ID, w.CreatedAt.Truncate(time.Microsecond)})
		}
	}
	return newestFirst(items)
}
