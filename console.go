package payd

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/smsinbox"
	"github.com/payd-engine/payd/transport/console"
)

// inboxConsole adapts the SMS inbox to the console's Inbox: the console
// knows no provider's types. The inbox's payout and message operations
// take a withdrawal or message ID alone, so each is first checked to be
// the organization's here: another's is not_found.
type inboxConsole struct {
	inbox   *smsinbox.Provider
	eng     *engine.Engine
	silence time.Duration
}

var _ console.Inbox = inboxConsole{}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (a inboxConsole) ListSMS(ctx context.Context, orgID, status string, limit int) ([]console.SMS, error) {
	ms, err := a.inbox.ListSMS(ctx, smsinbox.ListSMSParams{OrganizationID: orgID, Status: status, Limit: limit})
	if err != nil {
		return nil, err
	}
	out := make([]console.SMS, len(ms))
	for i, m := range ms {
		v := smsinbox.NewSMSView(m, true)
		out[i] = console.SMS{
			ID: m.ID, WalletID: m.WalletID, Sender: m.Sender, Status: m.Status, Reason: m.Reason, Body: m.Body,
			Kind: str(v.Kind), TransactionID: str(v.TransactionID), Amount: str(v.Amount), Counterparty: str(v.Counterparty),
			Balance: str(v.Balance), ReceivedAt: m.ReceivedAt,
		}
		if v.Match != nil {
			out[i].MatchDepositID, out[i].MatchStatus, out[i].MatchFailureCode = v.Match.DepositID, v.Match.AttemptStatus, str(v.Match.FailureCode)
		}
	}
	return out, nil
}

func (a inboxConsole) Anchor(ctx context.Context, orgID, walletID string, balance decimal.Decimal) (int, error) {
	_, proven, err := a.inbox.Anchor(ctx, orgID, walletID, balance)
	return len(proven), err
}

func (a inboxConsole) ListUnmatched(ctx context.Context, orgID string) ([]console.Unmatched, error) {
	us, err := a.inbox.ListUnmatched(ctx, orgID, 0)
	if err != nil {
		return nil, err
	}
	out := make([]console.Unmatched, len(us))
	for i, u := range us {
		v := smsinbox.NewUnmatchedView(orgID, u)
		out[i] = console.Unmatched{SMSID: u.SMS.ID, TransactionID: str(v.SMS.TransactionID), Amount: str(v.SMS.Amount),
			From: str(v.SMS.Counterparty), ReceivedAt: u.SMS.ReceivedAt, Next: v.Next}
		if d := u.Deposit; d != nil {
			out[i].DepositID, out[i].DepositStatus = d.ID, d.Status
			out[i].Creditable = d.Status != engine.StatusSucceeded
		}
	}
	return out, nil
}

func (a inboxConsole) CreditLatePayment(ctx context.Context, orgID, depositID, transactionID string) error {
	_, err := a.inbox.CreditLatePayment(ctx, engine.CreditLatePaymentParams{OrganizationID: orgID, DepositID: depositID, TransactionID: transactionID})
	return err
}

func (a inboxConsole) ListPayouts(ctx context.Context, orgID string, open bool) ([]console.Payout, error) {
	statuses := []string{""}
	if open {
		statuses = []string{smsinbox.PayoutQueued, smsinbox.PayoutMatched}
	}
	var ps []*smsinbox.ManualPayout
	for _, st := range statuses {
		more, err := a.inbox.ListPayouts(ctx, smsinbox.ListPayoutsParams{OrganizationID: orgID, Status: st})
		if err != nil {
			return nil, err
		}
		ps = append(ps, more...)
	}
	slices.SortStableFunc(ps, func(a, b *smsinbox.ManualPayout) int { return a.CreatedAt.Compare(b.CreatedAt) })
	out := make([]console.Payout, len(ps))
	for i, p := range ps {
		out[i] = console.Payout{WithdrawalID: p.IdempotencyKey, Method: p.Method, Account: p.Account, Amount: engine.FormatAmount(p.Amount),
			Status: p.Status, Reference: p.Reference, Reason: p.Reason, Operator: p.Operator, DepositID: p.DepositID, CreatedAt: p.CreatedAt}
	}
	return out, nil
}

// ownWithdrawal returns not_found unless the withdrawal (or the refund
// queued as a payout) is orgID's.
func (a inboxConsole) ownWithdrawal(ctx context.Context, orgID, id string) error {
	if strings.HasPrefix(id, engine.PrefixRefund) {
		_, err := a.eng.GetRefund(ctx, orgID, id)
		return err
	}
	_, err := a.eng.GetWithdrawal(ctx, orgID, id)
	return err
}

func (a inboxConsole) CompletePayout(ctx context.Context, orgID, withdrawalID, transactionID string) error {
	if err := a.ownWithdrawal(ctx, orgID, withdrawalID); err != nil {
		return err
	}
	_, err := a.inbox.CompletePayout(ctx, withdrawalID, transactionID)
	return err
}

func (a inboxConsole) ConfirmPayout(ctx context.Context, orgID, withdrawalID string) error {
	if err := a.ownWithdrawal(ctx, orgID, withdrawalID); err != nil {
		return err
	}
	_, err := a.inbox.ConfirmPayout(ctx, withdrawalID)
	return err
}

func (a inboxConsole) FailPayout(ctx context.Context, orgID, withdrawalID, reason string) error {
	if err := a.ownWithdrawal(ctx, orgID, withdrawalID); err != nil {
		return err
	}
	_, err := a.inbox.FailPayout(ctx, withdrawalID, reason)
	return err
}

func (a inboxConsole) ListDevices(ctx context.Context, orgID string) ([]console.Device, error) {
	ds, err := a.inbox.ListDevices(ctx, orgID)
	if err != nil {
		return nil, err
	}
	now := a.eng.Now()
	out := make([]console.Device, len(ds))
	for i, d := range ds {
		out[i] = console.Device{ID: d.Device.ID, Name: d.Device.Name, LastSeenAt: d.Device.LastSeenAt, Revoked: d.Device.RevokedAt != nil}
		out[i].Silent = d.Device.LastSeenAt == nil || now.Sub(*d.Device.LastSeenAt) > a.silence
		for _, c := range d.Chains {
			w := console.DeviceWallet{WalletID: c.WalletID, Channel: c.Channel}
			if c.Balance.Valid {
				w.Balance = engine.FormatAmount(c.Balance.Decimal)
			}
			out[i].Wallets = append(out[i].Wallets, w)
		}
	}
	return out, nil
}

func (a inboxConsole) RevokeDevice(ctx context.Context, orgID, deviceID string) error {
	_, err := a.inbox.RevokeDevice(ctx, orgID, deviceID)
	return err
}

func (a inboxConsole) AddDevice(ctx context.Context, p console.AddDevice) (*console.NewDevice, error) {
	c, err := a.inbox.AddDevice(ctx, smsinbox.AddDeviceParams{OrganizationID: p.OrganizationID, Name: p.Name, WalletIDs: p.WalletIDs, SigningSecret: p.SigningSecret})
	if err != nil {
		return nil, err
	}
	return &console.NewDevice{ID: c.Device.ID, Token: c.Token, SigningSecret: c.SigningSecret}, nil
}

func (a inboxConsole) RotateDevice(ctx context.Context, orgID, deviceID string) (string, error) {
	c, err := a.inbox.RotateDevice(ctx, orgID, deviceID)
	if err != nil {
		return "", err
	}
	return c.Token, nil
}

// withConsole serves the console under /console and payment links under
// /pay/ beside the API and checkout of api; the API's own prefix comes
// first (an embedding shop may put it under /pay/api). Without
// mountConsole (it has a listener of its own) only the payment links join
// the API. Paths are matched as they came: the API cleans and refuses
// hostile ones itself.
func withConsole(api http.Handler, h *console.Handlers, apiPrefix string, mountConsole bool) http.Handler {
	apiPrefix = strings.TrimRight(apiPrefix, "/")
	under := func(p, prefix string) bool { return p == prefix || strings.HasPrefix(p, prefix+"/") }
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		switch {
		case mountConsole && apiPrefix != "" && p == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
			strings.Contains(r.Header.Get("Accept"), "text/html"):
			// The root is no API path: a browser is led to the console; a
			// client of the API still gets its JSON 404 and hint.
			http.Redirect(w, r, h.Mount()+console.Path+"/", http.StatusSeeOther)
		case apiPrefix != "" && under(p, apiPrefix):
			api.ServeHTTP(w, r)
		case mountConsole && under(p, console.Path):
			h.Console.ServeHTTP(w, r)
		case strings.HasPrefix(p, console.PayPath):
			h.Pay.ServeHTTP(w, r)
		default:
			api.ServeHTTP(w, r)
		}
	})
}
