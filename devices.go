package payd

import (
	"context"
	"time"

	"github.com/payd-engine/payd/provider/smsinbox"
	"github.com/payd-engine/payd/transport"
)

// inboxDevices adapts the SMS inbox to the transport's Devices: the
// transport knows no provider's types.
type inboxDevices struct{ inbox *smsinbox.Provider }

var _ transport.Devices = inboxDevices{}

func (a inboxDevices) Authenticate(ctx context.Context, token string) (transport.Device, error) {
	d, err := a.inbox.Authenticate(ctx, token)
	if err != nil {
		return transport.Device{}, err
	}
	return transport.Device{ID: d.ID, Inbox: d}, nil
}

func (a inboxDevices) Verify(ctx context.Context, d transport.Device, sig transport.Signature) error {
	return a.inbox.VerifySignature(ctx, d.Inbox.(*smsinbox.Device),
		smsinbox.Signature{Scheme: sig.Scheme, Timestamp: sig.Timestamp, MAC: sig.MAC, Body: sig.Body})
}

func (a inboxDevices) Heartbeat(ctx context.Context, d transport.Device) (time.Time, error) {
	return a.inbox.Heartbeat(ctx, d.Inbox.(*smsinbox.Device))
}

func (a inboxDevices) Ingest(ctx context.Context, d transport.Device, in transport.IncomingSMS) error {
	_, _, err := a.inbox.Ingest(ctx, d.Inbox.(*smsinbox.Device),
		smsinbox.Incoming{Sender: in.Sender, Body: in.Body, ReceivedAt: in.ReceivedAt, SIMSlot: in.SIMSlot})
	return err
}
