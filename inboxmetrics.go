package payd

import (
	"context"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/metrics"
	"github.com/payd-engine/payd/provider/smsinbox"
)

// inboxMetrics reads the SMS inbox for a scrape: the payouts waiting for
// an operator (from their status index, all organizations at once), its
// maintained message counts, its devices' last reports and the wallets out
// of rotation, per organization (their number, their devices' and wallets' are the
// operator's configuration; none grows with the messages received).
func inboxMetrics(eng *engine.Engine, inbox *smsinbox.Provider) func(context.Context) (*metrics.Inbox, error) {
	return func(ctx context.Context) (*metrics.Inbox, error) {
		out := &metrics.Inbox{Messages: map[string]int{}, Silence: map[string]time.Duration{}}
		for _, s := range []string{smsinbox.StatusAccepted, smsinbox.StatusHeld, smsinbox.StatusConflict,
			smsinbox.StatusDuplicate, smsinbox.StatusUnparsed, smsinbox.StatusExpired} {
			out.Messages[s] = 0
		}
		now := eng.Now()
		waiting, err := inbox.WaitingPayouts(ctx)
		if err != nil {
			return nil, err
		}
		out.PayoutsWaiting = map[string]metrics.Waiting{}
		for _, state := range []string{smsinbox.PayoutQueued, smsinbox.PayoutMatched} {
			w := metrics.Waiting{Items: waiting[state].Items}
			if w.Items > 0 {
				w.OldestAge = now.Sub(waiting[state].Oldest)
			}
			out.PayoutsWaiting[state] = w
		}
		orgs, err := eng.ListOrganizations(ctx)
		if err != nil {
			return nil, err
		}
		for _, org := range orgs {
			stats, err := inbox.Stats(ctx, org.ID)
			if err != nil {
				return nil, err
			}
			for status, n := range stats.Total {
				out.Messages[status] += n
			}
			devices, err := inbox.ListDevices(ctx, org.ID)
			if err != nil {
				return nil, err
			}
			for _, d := range devices {
				if d.Device.RevokedAt != nil {
					continue
				}
				last := d.Device.CreatedAt
				if d.Device.LastSeenAt != nil {
					last = *d.Device.LastSeenAt
				}
				out.Silence[d.Device.Name] = max(out.Silence[d.Device.Name], now.Sub(last))
			}
			wallets, err := eng.ListWallets(ctx, org.ID)
			if err != nil {
				return nil, err
			}
			for _, w := range wallets {
				if w.Enabled && (w.LiveUntil == nil || !now.Before(*w.LiveUntil)) {
					out.WalletsOutOfRotation++
				}
			}
		}
		return out, nil
	}
}
