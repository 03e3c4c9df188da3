package engine

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// poolTx is a Tx holding one wallet pool: it counts lists and writes, and
// lists as a store does (least recently assigned first, then by ID).
type poolTx struct {
	Tx
	wallets []*Wallet
	lists   int
	updates []string // wallet IDs, in order
}

func (p *poolTx) ListWallets(_ context.Context, _ ListWalletsParams) ([]*Wallet, error) {
	p.lists++
	out := make([]*Wallet, 0, len(p.wallets))
	for _, w := range p.wallets {
		c := *w
		out = append(out, &c)
	}
	slices.SortStableFunc(out, rotationOrder)
	return out, nil
}

func (p *poolTx) UpdateWallet(_ context.Context, w *Wallet) error {
	p.updates = append(p.updates, w.ID)
	for _, s := range p.wallets {
		if s.ID == w.ID {
			c := *w
			*s = c
		}
	}
	return nil
}

func newPoolTx(n int) *poolTx {
	p := &poolTx{}
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	for i := range n {
		w := &Wallet{ID: fmt.Sprintf("wal_%d", i), Enabled: true, Phone: fmt.Sprintf("0181100000%d", i)}
		if i == 1 {
			at := t0.Add(-time.Hour) // assigned once, an hour ago
			w.LastAssignedAt = &at
		}
		p.wallets = append(p.wallets, w)
	}
	return p
}

// TestPickWalletInBatch: picks that share a transaction choose exactly the
// wallets that picks one after another would, list the pool once, and
// write each wallet's last assignment once, at the flush.
func TestPickWalletInBatch(t *testing.T) {
	m, _ := LookupMethod("bkash_agent")
	amount := decimal.NewFromInt(500)
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	pick := func(tx Tx, pools *lockedPools, i int) string {
		w, err := pickWallet(context.Background(), tx, pools, "org_1", m, amount, t0.Add(time.Duration(i)*time.Second), false)
		if err != nil {
			t.Fatal(err)
		}
		return w.ID
	}

	alone := newPoolTx(3)
	var want []string
	for i := range 10 {
		want = append(want, pick(alone, nil, i))
	}

	batch := newPoolTx(3)
	pools := newLockedPools()
	var got []string
	for i := range 10 {
		got = append(got, pick(batch, pools, i))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("picks in a batch %v, one after another %v", got, want)
	}
	if batch.lists != 1 || len(batch.updates) != 0 {
		t.Fatalf("before the flush: %d lists, %d writes; want 1 and 0", batch.lists, len(batch.updates))
	}
	if err := pools.flush(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(batch.updates, []string{"wal_0", "wal_1", "wal_2"}) {
		t.Fatalf("writes %v, want each wallet once in ID order", batch.updates)
	}
	for i, w := range batch.wallets {
		if !w.LastAssignedAt.Equal(*alone.wallets[i].LastAssignedAt) {
			t.Fatalf("%s last assigned %v in a batch, %v one after another", w.ID, w.LastAssignedAt, alone.wallets[i].LastAssignedAt)
		}
	}
}
