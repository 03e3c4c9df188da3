package payd

import (
	"context"
	"errors"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/bkash"
	"github.com/payd-engine/payd/transport/console"
)

// bkashConsole adapts the bKash provider to the console, which cannot name
// its types.
type bkashConsole struct{ p *bkash.Provider }

var _ console.Bkash = bkashConsole{}

// findBkash is the bKash provider among the provider and its fallback.
func findBkash(p engine.Provider) *bkash.Provider {
	for _, p := range withFallback(p) {
		if b, ok := p.(*bkash.Provider); ok {
			return b
		}
	}
	return nil
}

func (b bkashConsole) BkashConnection(ctx context.Context, orgID string) (string, error) {
	u, err := b.p.BaseURL(ctx, orgID)
	if errors.Is(err, bkash.ErrNotConnected) {
		return "", nil
	}
	return u, err
}

func (b bkashConsole) ConnectBkash(ctx context.Context, orgID string, c console.BkashCredentials) error {
	return b.p.Connect(ctx, orgID, bkash.Credentials{AppKey: c.AppKey, AppSecret: c.AppSecret,
		Username: c.Username, Password: c.Password, BaseURL: c.BaseURL})
}

func (b bkashConsole) DisconnectBkash(ctx context.Context, orgID string) (bool, error) {
	return b.p.Disconnect(ctx, orgID)
}
