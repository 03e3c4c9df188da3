package console

import (
	"context"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/payd-engine/payd/engine"
)

// A wallet's balance chain is the secret that stops whoever holds a leaked
// device token from forging an SMS that proves a deposit never paid or a
// payout never sent: a forgery must name the balance the chain continues
// from. The console shows a chain's balance only to the role that anchors
// it, on the page where it is anchored; everyone else sees each SMS, its
// reason and the audit log with the figures that could tell it hidden.

// hidden stands for a figure a role may not see.
const hidden = "•••"

// seesChain reports whether op may see a chain's balance: whoever may
// anchor one.
func seesChain(op *engine.Operator) bool { return hasRole(op, anchorRole) }

// chains returns an organization's wallet chains with their balances, one
// per wallet (a live device's before a revoked one's).
func (s *server) chains(ctx context.Context, orgID string) ([]DeviceWallet, error) {
	ds, err := s.inbox.ListDevices(ctx, orgID)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(ds, func(a, b Device) int {
		switch {
		case a.Revoked == b.Revoked:
			return 0
		case b.Revoked:
			return -1
		}
		return 1
	})
	seen := map[string]DeviceWallet{}
	for _, d := range ds {
		for _, w := range d.Wallets {
			if _, ok := seen[w.WalletID]; !ok {
				seen[w.WalletID] = w
			}
		}
	}
	return slices.SortedFunc(maps.Values(seen), func(a, b DeviceWallet) int { return strings.Compare(a.WalletID, b.WalletID) }), nil
}

// hideBalances returns m without its balance, and its text and reason
// without any figure but its transaction ID: a genuine SMS prints the
// wallet's balance, and a reason may name the chain's ("balance X does not
// follow the wallet's last known balance Y").
func hideBalances(m SMS) SMS {
	m.Balance = ""
	m.Body = hideFigures(m.Body, m.TransactionID)
	m.Reason = hideFigures(m.Reason, m.TransactionID)
	return m
}

// hideAuditBalances returns e with the value of every detail that names a
// balance hidden (an anchor's, a re-synchronization's).
func hideAuditBalances(e *engine.AuditEntry) *engine.AuditEntry {
	var out map[string]string
	for k := range e.Details {
		if strings.Contains(k, "balance") {
			if out == nil {
				out = maps.Clone(e.Details)
			}
			out[k] = hidden
		}
	}
	if out == nil {
		return e
	}
	c := *e
	c.Details = out
	return &c
}

var (
	// word is a run of letters and digits, with the separators of a
	// figure inside it: "74,418.46", "Tk.20.00", "sms_01j…".
	word = regexp.MustCompile(`[\p{L}\p{Nd}_]+(?:[.,][\p{L}\p{Nd}_]+)*`)
	// figure is a number as SMS texts print amounts and balances.
	figure = regexp.MustCompile(`\p{Nd}+(?:[.,]\p{Nd}+)*`)
	// paydID is one of payd's IDs (a message's, a gap's), which reasons
	// name.
	paydID = regexp.MustCompile(`^[a-z]+_[0-9a-z]{26}$`)
)

// hideFigures replaces every figure of text, wherever it stands (SMS texts
// glue them to words: "Tk12,500.00"), but in payd's IDs and the words of
// keep.
func hideFigures(text string, keep ...string) string {
	return word.ReplaceAllStringFunc(text, func(w string) string {
		if paydID.MatchString(w) || slices.Contains(keep, w) {
			return w
		}
		return figure.ReplaceAllString(w, hidden)
	})
}
