package client_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/payd-engine/payd/transport/client"
)

// TestListsAndIterators: the iterators page for the caller (newest first,
// or oldest first after EndingBefore), the lists' filters reach the server,
// an H2H organization's lists are signed, and a bad parameter is a typed
// error.
func TestListsAndIterators(t *testing.T) {
	e := newEnv(t, envOptions{Withdrawals: true, Balance: "50000", PayoutMode: "manual"})
	ctx := ctxT(t)
	c := client.New(e.Base, e.APIKey, e.Secret)
	var deposits, withdrawals []string
	for i := range 7 {
		d, _, err := c.CreateH2HDeposit(ctx, h2hRequest(fmt.Sprintf("list-%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		deposits = append(deposits, d.ID)
		w, err := c.CreateWithdrawal(ctx, client.WithdrawalRequest{Amount: "100", Phone: "01712345678", PaymentMethod: "bkash", MerchantID: fmt.Sprintf("wd-%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		withdrawals = append(withdrawals, w.ID)
	}
	collect := func(seq func(func(string, error) bool)) []string {
		t.Helper()
		var ids []string
		for id, err := range seq {
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		return ids
	}
	// Within one millisecond IDs do not sort by creation: compare sets,
	// and check the order against the server's own single page.
	all, err := c.ListDeposits(ctx, client.ListParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var newest []string
	for _, d := range all.Data {
		newest = append(newest, d.ID)
	}
	if got := slices.Sorted(slices.Values(newest)); !slices.Equal(got, slices.Sorted(slices.Values(deposits))) || all.HasMore {
		t.Fatalf("ListDeposits = %v, want %v", newest, deposits)
	}
	paged := collect(func(yield func(string, error) bool) {
		for d, err := range c.Deposits(ctx, client.ListParams{Limit: 2}) {
			if !yield(d.ID, err) {
				return
			}
		}
	})
	if !slices.Equal(paged, newest) {
		t.Errorf("Deposits = %v, want %v", paged, newest)
	}
	// From an item towards the newest, oldest first.
	after := collect(func(yield func(string, error) bool) {
		for d, err := range c.Deposits(ctx, client.ListParams{Limit: 2, EndingBefore: newest[5]}) {
			if !yield(d.ID, err) {
				return
			}
		}
	})
	want := slices.Clone(newest[:5])
	slices.Reverse(want)
	if !slices.Equal(after, want) {
		t.Errorf("Deposits after %s = %v, want %v", newest[5], after, want)
	}
	// Stopping early stops paging.
	n := 0
	for range c.Withdrawals(ctx, client.ListParams{Limit: 3}) {
		n++
		if n == 4 {
			break
		}
	}
	if n != 4 {
		t.Errorf("stopped after %d", n)
	}
	found, err := c.ListWithdrawals(ctx, client.ListParams{MerchantID: "wd-3"})
	if err != nil || len(found.Data) != 1 || found.Data[0].ID != withdrawals[3] {
		t.Fatalf("ListWithdrawals by merchant_id = %+v, %v", found, err)
	}
	var events []client.Event
	for ev, err := range c.Events(ctx, client.ListParams{Type: "withdraw.created", Limit: 5}) {
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
	}
	if len(events) != 7 {
		t.Fatalf("%d withdraw.created events", len(events))
	}
	w, err := events[0].Withdrawal()
	if err != nil || !slices.Contains(withdrawals, w.ID) {
		t.Fatalf("event data: %+v %v", w, err)
	}
	one, err := c.GetEvent(ctx, events[0].ID)
	if err != nil || one.ID != events[0].ID || string(one.Data) != string(events[0].Data) {
		t.Fatalf("GetEvent = %+v, %v", one, err)
	}
	var held []client.BalanceTransaction
	for bt, err := range c.BalanceTransactions(ctx, client.ListParams{Account: "held"}) {
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, bt)
	}
	if len(held) != 7 || held[0].Kind != "withdrawal_hold" || held[0].BalanceAfter != "700.00" || held[0].Currency != "BDT" {
		t.Fatalf("held movements: %+v", held)
	}

	// Errors: a typed *Error, yielded once by an iterator.
	_, err = c.ListDeposits(ctx, client.ListParams{Status: "paid"})
	apiError(t, err, http.StatusBadRequest, client.CodeInvalidRequest)
	errs := 0
	for _, err := range c.Events(ctx, client.ListParams{StartingAfter: "evt_nope"}) {
		apiError(t, err, http.StatusBadRequest, client.CodeInvalidRequest)
		errs++
	}
	if errs != 1 {
		t.Errorf("%d errors yielded", errs)
	}
	// Unsigned, an H2H organization's lists that show deposits are
	// refused; its withdrawals are bearer.
	unsigned := client.New(e.Base, e.APIKey, "")
	_, err = unsigned.ListDeposits(ctx, client.ListParams{})
	apiError(t, err, http.StatusUnauthorized, client.CodeUnauthorized)
	_, err = unsigned.ListBalanceTransactions(ctx, client.ListParams{})
	apiError(t, err, http.StatusUnauthorized, client.CodeUnauthorized)
	if _, err := unsigned.ListWithdrawals(ctx, client.ListParams{}); err != nil {
		t.Errorf("unsigned ListWithdrawals: %v", err)
	}
}
