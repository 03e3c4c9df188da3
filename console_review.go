package payd

import (
	"context"

	"github.com/payd-engine/payd/provider/smsinbox"
	"github.com/payd-engine/payd/transport/console"
)

// The console's review of SMS: the inbox's own operations, audited with the
// operator the console puts in ctx (engine.WithActor).

func (a inboxConsole) ApproveSMS(ctx context.Context, orgID, messageID, reason string) error {
	_, err := a.inbox.ApproveSMS(ctx, orgID, messageID, reason)
	return err
}

func (a inboxConsole) RejectSMS(ctx context.Context, orgID, messageID, reason string) error {
	_, err := a.inbox.RejectSMS(ctx, orgID, messageID, reason)
	return err
}

func (a inboxConsole) PasteSMS(ctx context.Context, p console.PasteSMS) error {
	_, err := a.inbox.PasteSMS(ctx, smsinbox.PasteParams{OrganizationID: p.OrganizationID, WalletID: p.WalletID,
		Sender: p.Sender, Text: p.Text, ReceivedAt: p.ReceivedAt})
	return err
}
