package paydserver

import (
	"context"
	"errors"

	"github.com/payd-engine/payd/transport/console"
)

// The SMS review operations of the console's Inbox. The inbox gains them
// on the sms-chain branch (smsinbox.Provider.ApproveSMS, RejectSMS,
// PasteSMS); until that merges they answer "not available".

// LEAD: wire to smsinbox.ApproveSMS/RejectSMS/PasteSMS at merge
func (a inboxConsole) ApproveSMS(ctx context.Context, orgID, messageID, reason string) error {
	return errors.New("not available")
}

// LEAD: wire to smsinbox.ApproveSMS/RejectSMS/PasteSMS at merge
func (a inboxConsole) RejectSMS(ctx context.Context, orgID, messageID, reason string) error {
	return errors.New("not available")
}

// LEAD: wire to smsinbox.ApproveSMS/RejectSMS/PasteSMS at merge
func (a inboxConsole) PasteSMS(ctx context.Context, p console.PasteSMS) error {
	return errors.New("not available")
}
