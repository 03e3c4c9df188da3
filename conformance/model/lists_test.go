package model

import (
	"fmt"
	"slices"

	"github.com/payd-engine/payd/engine"
)

// checkLists pages an organization's deposits or withdrawals through the
// engine and compares the walk with the model's list, after every step
// (from invariants). It draws nothing, so that the recorded failures of
// the other actions stay valid: the step number picks the organization,
// the list, the page size, the direction (forward from the newest with
// starting_after, or backward from the oldest with ending_before) and the
// filter. It also offers another organization's newest deposit as the
// cursor, which must be refused as an unknown one.
func (r *run) checkLists() {
	r.listStep++
	i := r.listStep
	org := r.orgs[i%len(r.orgs)]
	limit := 1 + i%4
	backward := i%3 == 1
	var f ListFilter
	switch i % 5 {
	case 1:
		f.Status = []string{Pending, Processing, Succeeded, Failed, Expired, Cancelled}[(i/5)%6]
	case 3:
		f.Method = []string{"bkash", "nagad", "bkash_agent", "upay"}[(i/5)%4]
	}
	withdrawals := i%7 >= 5
	if withdrawals && (f.Status == Pending || f.Status == Expired || f.Status == Cancelled) {
		withdrawals = false
	}
	p := engine.ListParams{OrganizationID: org, Limit: limit, Status: f.Status, PaymentMethod: f.Method}
	want := r.m.ListDeposits(org, f)
	what := "deposits"
	page := func(p engine.ListParams) ([]string, bool, error) {
		pg, err := r.h.eng.ListDeposits(r.h.ctx, p)
		if err != nil {
			return nil, false, err
		}
		ids := make([]string, len(pg.Data))
		for i, d := range pg.Data {
			ids[i] = d.ID
		}
		return ids, pg.HasMore, nil
	}
	if withdrawals {
		if f.Method == "bkash_agent" {
			f.Method, p.PaymentMethod = "bank", "bank"
		}
		want, what = r.m.ListWithdrawals(org, f), "withdrawals"
		page = func(p engine.ListParams) ([]string, bool, error) {
			pg, err := r.h.eng.ListWithdrawals(r.h.ctx, p)
			if err != nil {
				return nil, false, err
			}
			ids := make([]string, len(pg.Data))
			for i, w := range pg.Data {
				ids[i] = w.ID
			}
			return ids, pg.HasMore, nil
		}
	}
	if backward && len(want) > 0 {
		// From the oldest, exclusive.
		p.EndingBefore = want[len(want)-1]
		want = want[:len(want)-1]
	}
	var got []string
	for steps := 0; ; steps++ {
		if steps > len(want)+2 {
			r.fatalf("list %s %+v does not end: %v", what, p, got)
		}
		ids, more, err := page(p)
		if err != nil {
			r.fatalf("list %s %+v: %v", what, p, err)
		}
		if len(ids) > limit || more && len(ids) < limit {
			r.fatalf("list %s %+v: %d items, has_more %v", what, p, len(ids), more)
		}
		if backward {
			got = append(ids, got...)
		} else {
			got = append(got, ids...)
		}
		if !more {
			break
		}
		if backward {
			p.EndingBefore = ids[0]
		} else {
			p.StartingAfter = ids[len(ids)-1]
		}
	}
	if !slices.Equal(got, want) {
		r.fatalf("list %s of %s (%+v, limit %d, backward %v) = %v, model %v", what, org, f, limit, backward, got, want)
	}
	r.h.seen[fmt.Sprintf("list %-11s %d items", what, min(len(got), 3))]++

	// Another organization's deposit is no cursor of this one's list.
	if n := len(r.m.DepositOrder); n > 0 {
		d := r.m.Deposits[r.m.DepositOrder[n-1]]
		other := r.otherOrg(d.OrgID)
		_, err := r.h.eng.ListDeposits(r.h.ctx, engine.ListParams{OrganizationID: other, StartingAfter: d.ID})
		r.wantCode("list with a foreign cursor", d.ID, err, CodeInvalid)
	}
}
