package engine

import (
	"context"
	"strings"
	"time"
)

// PrefixAudit is the prefix of audit log entry IDs.
const PrefixAudit = "aud_"

// Audit actions: every administrative change the engine makes records one,
// in the transaction of the change.
const (
	AuditOrgCreate           = "org.create"
	AuditOrgUpdate           = "org.update"
	AuditKeyCreate           = "api_key.create"
	AuditKeyRotate           = "api_key.rotate"
	AuditKeyRevoke           = "api_key.revoke"
	AuditSigningSecretRotate = "signing_secret.rotate"
	AuditWalletAdd           = "wallet.add"
	AuditWalletEnable        = "wallet.enable"
	AuditWalletDisable       = "wallet.disable"
	AuditBalanceAdjust       = "balance.adjust"
	AuditWebhookAdd          = "webhook.add"
	AuditWebhookRemove       = "webhook.remove"
	AuditWebhookEnable       = "webhook.enable"
	AuditWebhookRotateSecret = "webhook.rotate_secret"
	AuditWebhookRedeliver    = "webhook.redeliver"
	AuditCompatIPNRedeliver  = "compat_ipn.redeliver"
)

// The actor recorded when the context names none, and the longest one kept.
const (
	unknownActor   = "unknown"
	maxActorLength = 100
)

// AuditEntry is one administrative action: who did what to which
// organization and resource, and when. Details are plain values the action
// was given or produced (IDs, names, amounts); never a secret, key or
// signature. The log is append-only: entries are never changed or removed.
type AuditEntry struct {
	ID             string
	Actor          string
	Action         string
	OrganizationID string
	// Subject is the ID of the resource acted on (an organization, API key,
	// wallet, webhook endpoint, event or journal).
	Subject   string
	Details   map[string]string
	CreatedAt time.Time
}

type actorKey struct{}

// WithActor returns a context that names who is acting: the engine records
// it in the audit log entry of every administrative change made with that
// context. Without it the actor is recorded as "unknown".
func WithActor(ctx context.Context, actor string) context.Context {
	return context.WithValue(ctx, actorKey{}, actor)
}

// ActorFrom returns the actor WithActor put in ctx, trimmed, or "unknown".
// An actor that is not printable text, or too long, is recorded as unknown
// rather than refusing the action.
func ActorFrom(ctx context.Context) string {
	a, _ := ctx.Value(actorKey{}).(string)
	a = strings.TrimSpace(a)
	if a == "" || len(a) > maxActorLength || checkText("actor", a) != nil {
		return unknownActor
	}
	return a
}

// audit appends an entry for an administrative change in the caller's
// transaction, so the entry and the change commit or vanish together.
func (e *Engine) audit(ctx context.Context, tx Tx, action, orgID, subject string, details map[string]string) error {
	now := e.now()
	return tx.AppendAudit(ctx, &AuditEntry{
		ID: NewID(PrefixAudit, now), Actor: ActorFrom(ctx), Action: action,
		OrganizationID: orgID, Subject: subject, Details: details, CreatedAt: now,
	})
}

// ListAudit returns the audit log of an organization, oldest first; limit,
// when positive, keeps only the latest entries.
func (e *Engine) ListAudit(ctx context.Context, orgID string, limit int) ([]*AuditEntry, error) {
	var out []*AuditEntry
	err := e.store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
		if _, err := tx.GetOrganization(ctx, orgID); err != nil {
			return notFound(err, "organization")
		}
		var err error
		out, err = tx.ListAudit(ctx, ListAuditParams{OrganizationID: orgID})
		return err
	})
	if limit > 0 && len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, err
}
