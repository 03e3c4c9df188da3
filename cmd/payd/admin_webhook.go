package main

import (
	"context"
	"flag"
	"time"

	"github.com/payd-engine/payd/engine"
)

// endpointView is a webhook endpoint as admin commands print it.
type endpointView struct {
	EndpointID     string  `json:"endpoint_id"`
	OrganizationID string  `json:"organization_id"`
	URL            string  `json:"url"`
	Enabled        bool    `json:"enabled"`
	DisabledReason string  `json:"disabled_reason,omitempty"`
	FailingSince   *string `json:"failing_since"`
	Rotating       bool    `json:"rotating"`
	CreatedAt      string  `json:"created_at"`
}

func newEndpointView(ep *engine.WebhookEndpoint, now time.Time) endpointView {
	v := endpointView{
		EndpointID: ep.ID, OrganizationID: ep.OrganizationID, URL: ep.URL, Enabled: ep.Enabled,
		DisabledReason: ep.DisabledReason, Rotating: ep.PreviousSecret != nil && now.Before(ep.PreviousSecretExpiresAt),
		CreatedAt: engine.FormatTime(ep.CreatedAt),
	}
	if !ep.FailingSince.IsZero() {
		s := engine.FormatTime(ep.FailingSince)
		v.FailingSince = &s
	}
	return v
}

func webhookAdd(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	org := fs.String("org", "", "organization ID")
	url := fs.String("url", "", "absolute http(s) URL that receives the events")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		ep, secret, err := eng.AddWebhookEndpoint(ctx, *org, *url)
		if err != nil {
			return nil, err
		}
		return map[string]string{"endpoint_id": ep.ID, "url": ep.URL, "secret": secret}, nil
	}
}

func webhookList(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	org := fs.String("org", "", "organization ID")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		eps, err := eng.ListWebhookEndpoints(ctx, *org)
		if err != nil {
			return nil, err
		}
		views := make([]endpointView, len(eps))
		for i, ep := range eps {
			views[i] = newEndpointView(ep, eng.Now())
		}
		return map[string]any{"endpoints": views}, nil
	}
}

func webhookRemove(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	id := fs.String("endpoint", "", "endpoint ID")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		if err := eng.RemoveWebhookEndpoint(ctx, *id); err != nil {
			return nil, err
		}
		return map[string]any{"endpoint_id": *id, "removed": true}, nil
	}
}

func webhookEnable(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	id := fs.String("endpoint", "", "endpoint ID")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		ep, err := eng.EnableWebhookEndpoint(ctx, *id)
		if err != nil {
			return nil, err
		}
		return newEndpointView(ep, eng.Now()), nil
	}
}

func webhookRotateSecret(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	id := fs.String("endpoint", "", "endpoint ID")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		secret, err := eng.RotateWebhookSecret(ctx, *id)
		if err != nil {
			return nil, err
		}
		return map[string]string{
			"endpoint_id": *id, "secret": secret,
			"previous_secret_valid_until": engine.FormatTime(eng.Now().Add(engine.WebhookSecretGrace)),
		}, nil
	}
}

func webhookRedeliver(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	event := fs.String("event", "", "event ID (evt_...)")
	endpoint := fs.String("endpoint", "", "endpoint ID; default every enabled endpoint of the event's organization")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		n, err := eng.Redeliver(ctx, *event, *endpoint)
		if err != nil {
			return nil, err
		}
		return map[string]any{"event_id": *event, "queued": n}, nil
	}
}

// eventView is an event with what became of its deliveries.
type eventView struct {
	EventID    string         `json:"event_id"`
	Type       string         `json:"type"`
	ResourceID string         `json:"resource_id"`
	CreatedAt  string         `json:"created_at"`
	Deliveries []deliveryView `json:"deliveries"`
}

type deliveryView struct {
	DeliveryID  string     `json:"delivery_id"`
	EndpointID  string     `json:"endpoint_id"`
	Status      string     `json:"status"`
	Attempts    int        `json:"attempts"`
	NextAttempt *string    `json:"next_attempt_at"`
	LastError   string     `json:"last_error,omitempty"`
	Posts       []postView `json:"posts"`
}

type postView struct {
	At         string `json:"at"`
	StatusCode int    `json:"status_code"`
	Error      string `json:"error,omitempty"`
	Duration   string `json:"duration"`
}

func webhookEvents(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	org := fs.String("org", "", "organization ID")
	limit := fs.Int("limit", 50, "how many of the latest events")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		items, err := eng.ListEventDeliveries(ctx, *org, *limit)
		if err != nil {
			return nil, err
		}
		views := make([]eventView, len(items))
		for i, it := range items {
			v := eventView{EventID: it.Event.ID, Type: it.Event.Type, ResourceID: it.Event.ResourceID, CreatedAt: engine.FormatTime(it.Event.CreatedAt)}
			for _, d := range it.Deliveries {
				dv := deliveryView{DeliveryID: d.ID, EndpointID: d.EndpointID, Status: d.Status, Attempts: d.Attempts, LastError: d.LastError}
				if d.Status == engine.DeliveryPending {
					s := engine.FormatTime(d.NextAttemptAt)
					dv.NextAttempt = &s
				}
				for _, p := range d.Posts {
					dv.Posts = append(dv.Posts, postView{engine.FormatTime(p.AttemptedAt), p.StatusCode, p.Error, p.Duration.Round(time.Millisecond).String()})
				}
				v.Deliveries = append(v.Deliveries, dv)
			}
			views[i] = v
		}
		return map[string]any{"events": views}, nil
	}
}
