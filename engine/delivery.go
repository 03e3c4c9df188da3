package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Delivery statuses.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	// DeliveryExhausted deliveries ran out of retries (or their endpoint
	// answered 410); they are kept for manual redelivery.
	DeliveryExhausted = "exhausted"
)

// Delivery is one event to one endpoint: created with the event, in its
// transaction, for every enabled endpoint of the organization.
type Delivery struct {
	ID             string
	EventID        string
	EndpointID     string
	OrganizationID string
	Status         string
	// Attempts counts posts made; NextAttemptAt is when the next is due.
	Attempts      int
	NextAttemptAt time.Time
	LeaseOwner    string
	LeasedUntil   time.Time
	// LastStatusCode is the last HTTP status (0 if none came back);
	// LastError describes the last failure.
	LastStatusCode int
	LastError      string
	DeliveredAt    time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// DeliveryAttempt is the record of one post, for operators.
type DeliveryAttempt struct {
	DeliveryID  string
	AttemptedAt time.Time
	StatusCode  int
	Error       string
	Duration    time.Duration
}

// WebhookClient posts signed webhooks. The transport implements it over
// HTTP (15 s timeout, no redirects, destinations checked at dial time).
type WebhookClient interface {
	// Deliver posts one webhook and reports what happened. It never
	// returns an error: failures are in the result.
	Deliver(ctx context.Context, req WebhookRequest) WebhookResult
}

// WebhookRequest is one post of an event to an endpoint.
type WebhookRequest struct {
	URL string
	// MessageID is the webhook-id: the event's ID, the same on every retry.
	MessageID string
	// Timestamp is the webhook-timestamp, fresh for every attempt.
	Timestamp time.Time
	Body      []byte
	// Secrets are the "whsec_..." secrets to sign with (two during a
	// rotation, the newest first).
	Secrets []string
}

// WebhookResult is what a receiver answered.
type WebhookResult struct {
	// StatusCode is the HTTP status, 0 when no response came back.
	StatusCode int
	// RetryAfter is the receiver's Retry-After (429 and 503), 0 if none.
	RetryAfter time.Duration
	// Err describes a failure to get a response (refused destination,
	// timeout, connection error).
	Err error
}

// ClaimDeliveriesParams selects and leases due deliveries.
type ClaimDeliveriesParams struct {
	ClaimParams
	// PerEndpoint caps the deliveries claimed for any one endpoint.
	PerEndpoint int
	// ExcludeEndpoints are endpoints to skip (they have posts in flight).
	ExcludeEndpoints []string
	// FastEndpoints may have up to FastPerEndpoint claimed instead of
	// PerEndpoint: their posts have been quick, so their deliveries can
	// wait in the process for a free slot well within their lease.
	FastEndpoints   []string
	FastPerEndpoint int
}

// ListDeliveriesParams filters ListDeliveries. Empty strings match all.
type ListDeliveriesParams struct {
	OrganizationID string
	EventID        string
	EndpointID     string
	Status         string
	Limit          int // zero means no limit
}

// webhookRetrySchedule is the contract's: the waits after the first failed
// post, the second, and so on. A delivery failing after the last is
// exhausted (eight posts in all, over about 27.5 hours).
var webhookRetrySchedule = []time.Duration{
	5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour,
}

// maxRetryAfter bounds how long a receiver's Retry-After can defer a post.
const maxRetryAfter = 24 * time.Hour

// Redeliver queues an event again, now, to one endpoint of its
// organization or (endpointID empty) to all enabled ones, whatever became
// of earlier deliveries: an endpoint added since the event gets it too.
// Returns how many deliveries were queued.
func (e *Engine) Redeliver(ctx context.Context, eventID, endpointID string) (int, error) {
	n := 0
	err := e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		n = 0 // fn may run more than once
		ev, err := tx.GetEvent(ctx, eventID)
		if err != nil {
			return notFound(err, "event")
		}
		var eps []*WebhookEndpoint
		if endpointID != "" {
			ep, err := tx.GetWebhookEndpoint(ctx, endpointID)
			if err != nil || ep.OrganizationID != ev.OrganizationID {
				return Errorf(CodeNotFound, "webhook endpoint not found")
			}
			eps = []*WebhookEndpoint{ep}
		} else if eps, err = tx.ListWebhookEndpoints(ctx, ev.OrganizationID, true); err != nil {
			return err
		}
		now := e.now()
		existing, err := tx.ListDeliveries(ctx, ListDeliveriesParams{EventID: eventID})
		if err != nil {
			return err
		}
		byEndpoint := map[string]*Delivery{}
		for _, d := range existing {
			byEndpoint[d.EndpointID] = d
		}
		for _, ep := range eps {
			known, ok := byEndpoint[ep.ID]
			if !ok {
				if err := tx.CreateDelivery(ctx, newDelivery(ev, ep.ID, now)); err != nil {
					return err
				}
				n++
				continue
			}
			d, err := tx.LockDelivery(ctx, known.ID)
			if err != nil {
				return err
			}
			d.Status, d.Attempts, d.NextAttemptAt = DeliveryPending, 0, now
			d.LeaseOwner, d.LeasedUntil, d.UpdatedAt = "", time.Time{}, now
			if err := tx.UpdateDelivery(ctx, d); err != nil {
				return err
			}
			n++
		}
		return e.audit(ctx, tx, AuditWebhookRedeliver, ev.OrganizationID, ev.ID, map[string]string{
			"endpoint_id": endpointID, "queued": fmt.Sprint(n),
		})
	})
	if err == nil {
		e.wakeWorkers()
	}
	return n, err
}

// EventDeliveries is an event with its deliveries and their posts.
type EventDeliveries struct {
	Event      *Event
	Deliveries []DeliveryWithAttempts
}

// DeliveryWithAttempts is a delivery with the record of its posts.
type DeliveryWithAttempts struct {
	*Delivery
	Posts []*DeliveryAttempt
}

// ListEventDeliveries returns an organization's latest events (oldest
// first) with what became of their deliveries.
func (e *Engine) ListEventDeliveries(ctx context.Context, orgID string, limit int) ([]EventDeliveries, error) {
	var out []EventDeliveries
	err := e.store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
		out = nil // fn may run more than once
		if _, err := tx.GetOrganization(ctx, orgID); err != nil {
			return notFound(err, "organization")
		}
		evs, err := tx.ListEvents(ctx, ListEventsParams{OrganizationID: orgID})
		if err != nil {
			return err
		}
		if limit > 0 && len(evs) > limit {
			evs = evs[len(evs)-limit:]
		}
		for _, ev := range evs {
			ds, err := tx.ListDeliveries(ctx, ListDeliveriesParams{EventID: ev.ID})
			if err != nil {
				return err
			}
			item := EventDeliveries{Event: ev}
			for _, d := range ds {
				posts, err := tx.ListDeliveryAttempts(ctx, d.ID)
				if err != nil {
					return err
				}
				item.Deliveries = append(item.Deliveries, DeliveryWithAttempts{d, posts})
			}
			out = append(out, item)
		}
		return nil
	})
	return out, err
}

func newDelivery(ev *Event, endpointID string, now time.Time) *Delivery {
	return &Delivery{
		ID: NewID(PrefixDelivery, now), EventID: ev.ID, EndpointID: endpointID, OrganizationID: ev.OrganizationID,
		Status: DeliveryPending, NextAttemptAt: now, CreatedAt: now, UpdatedAt: now,
	}
}

// dispatcher runs webhook posts concurrently: at most
// Config.WebhookPerEndpoint at a time to any endpoint, so one slow or dead
// receiver only ever holds its own slots. A slot is held for the post
// only: its outcome is recorded (a commit) while the next goes out. A
// claim may take up to that many more of an endpoint's deliveries while
// some are in flight: they wait here and each is posted as a slot frees,
// so an endpoint's posts follow one another without waiting for a claim
// between them.
//
// An endpoint whose last post was answered within webhookFastPost is fast:
// a claim may take webhookFastQueue times as many of its deliveries, so
// that they follow one another through its slots without a claim (a
// commit) between every few; at that speed the queue drains well within
// the lease. Others, and endpoints not yet posted to, get one slot's worth
// each, whatever their posts' pace: a slow endpoint's deliveries never
// wait here long enough to outlive their lease.
type dispatcher struct {
	mu       sync.Mutex
	inFlight map[string]int
	waiting  map[string][]*Delivery
	fast     map[string]time.Time // fast endpoints, by when they last answered
	wg       sync.WaitGroup
}

const (
	webhookFastPost  = time.Second
	webhookFastQueue = 8
	// A claim names at most maxFastEndpoints fast endpoints, those with
	// posts in flight first, then the latest answered; an endpoint not
	// posted to for fastForgotten is forgotten. Both keep the claim's
	// statement and this map bounded however many endpoints there are.
	maxFastEndpoints = 64
	fastForgotten    = 10 * time.Minute
)

// claimCaps returns the endpoints that have as many deliveries in flight
// or waiting as one claim could add, for the next claim to leave out, and
// the fast endpoints the claim may take more of.
func (d *dispatcher) claimCaps(perEndpoint int, now time.Time) (full, fast []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for ep, n := range d.inFlight {
		limit := perEndpoint
		if _, ok := d.fast[ep]; ok {
			limit *= webhookFastQueue
		}
		if n+len(d.waiting[ep]) >= limit {
			full = append(full, ep)
		}
	}
	for ep, at := range d.fast {
		if now.Sub(at) >= fastForgotten {
			delete(d.fast, ep)
			continue
		}
		fast = append(fast, ep)
	}
	if len(fast) > maxFastEndpoints {
		slices.SortFunc(fast, func(x, y string) int {
			if bx, by := d.inFlight[x] > 0, d.inFlight[y] > 0; bx != by {
				if bx {
					return -1
				}
				return 1
			}
			return d.fast[y].Compare(d.fast[x])
		})
		fast = fast[:maxFastEndpoints]
	}
	return full, fast
}

// posted notes how quickly an endpoint answered.
func (d *dispatcher) posted(endpointID string, res WebhookResult, took time.Duration, now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if res.StatusCode != 0 && took < webhookFastPost {
		d.fast[endpointID] = now
	} else {
		delete(d.fast, endpointID)
	}
}

// DeliverWebhooks claims the due deliveries and posts them, waiting until
// every post it started has finished. Returns how many it claimed.
func (e *Engine) DeliverWebhooks(ctx context.Context) (int, error) {
	n, err := e.startDeliveries(ctx)
	e.deliveries.wg.Wait()
	return n, err
}

// startDeliveries claims due deliveries of endpoints with room and posts
// each, in a goroutine per free slot, without waiting; the others wait for
// a slot of their endpoint.
func (e *Engine) startDeliveries(ctx context.Context) (int, error) {
	if e.cfg.Webhooks == nil {
		return 0, nil
	}
	now := e.now()
	var claimed []*Delivery
	// A claim shares the transaction of the posts' outcomes being
	// recorded meanwhile (group commit), ahead of them.
	full, fast := e.deliveries.claimCaps(e.cfg.WebhookPerEndpoint, time.Now())
	err := e.posts.inTx(ctx, "", func(ctx context.Context, tx Tx, _ *sharedTx) error {
		var err error
		claimed, err = tx.ClaimDueDeliveries(ctx, ClaimDeliveriesParams{
			ClaimParams: ClaimParams{Now: now, Owner: e.workerID, LeasedUntil: now.Add(e.cfg.LeaseDuration), Limit: e.cfg.WebhookConcurrency},
			PerEndpoint: e.cfg.WebhookPerEndpoint, ExcludeEndpoints: full,
			FastEndpoints: fast, FastPerEndpoint: e.cfg.WebhookPerEndpoint * webhookFastQueue,
		})
		return err
	})
	if err != nil {
		return 0, err
	}
	d := &e.deliveries
	for _, del := range claimed {
		d.mu.Lock()
		if d.inFlight[del.EndpointID] >= e.cfg.WebhookPerEndpoint {
			d.waiting[del.EndpointID] = append(d.waiting[del.EndpointID], del)
			d.mu.Unlock()
			continue
		}
		d.inFlight[del.EndpointID]++
		d.mu.Unlock()
		d.wg.Add(1)
		go e.postFrom(ctx, del)
	}
	return len(claimed), nil
}

// postFrom posts del, then the deliveries waiting for a slot of its
// endpoint, one after another, and frees the slot when none is left.
func (e *Engine) postFrom(ctx context.Context, del *Delivery) {
	d := &e.deliveries
	defer d.wg.Done()
	for del != nil {
		// A delivery that waited past its lease is left to be claimed
		// again; its post is made then.
		if ctx.Err() == nil && e.now().Before(del.LeasedUntil) {
			record, err := e.post(ctx, del)
			if err != nil && ctx.Err() == nil && !e.noteUnavailable(ctx, err) {
				e.cfg.Logger.ErrorContext(ctx, "webhook delivery failed", "delivery", del.ID, "err", err)
			}
			// The slot is the post's: the endpoint's next delivery goes out
			// while this outcome waits for its commit. An answered post is
			// recorded even if shutdown begins meanwhile (Run waits for it),
			// so that it is not made again (bounded by the lease, past which it
			// would be void).
			if record != nil {
				d.wg.Add(1)
				go func(del *Delivery) {
					defer d.wg.Done()
					ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.cfg.LeaseDuration)
					defer cancel()
					if err := record(ctx); err != nil && !e.noteUnavailable(ctx, err) {
						e.cfg.Logger.ErrorContext(ctx, "webhook delivery failed to record", "delivery", del.ID, "err", err)
					}
				}(del)
			}
		}
		d.mu.Lock()
		if q := d.waiting[del.EndpointID]; len(q) > 0 && ctx.Err() == nil {
			next := q[0]
			if len(q) == 1 {
				delete(d.waiting, del.EndpointID)
			} else {
				d.waiting[del.EndpointID] = q[1:]
			}
			del = next
		} else {
			if len(q) > 0 {
				delete(d.waiting, del.EndpointID) // shutting down: their leases run out
			}
			if d.inFlight[del.EndpointID]--; d.inFlight[del.EndpointID] <= 0 {
				delete(d.inFlight, del.EndpointID)
			}
			del = nil
		}
		d.mu.Unlock()
	}
	e.wakeWorkers() // the endpoint has room again
}

// post posts one delivery and returns what records its outcome, if this
// worker still holds its lease (nil for a post cut off by shutdown: it is
// made again once the lease is handed back or runs out).
func (e *Engine) post(ctx context.Context, d *Delivery) (record func(context.Context) error, _ error) {
	// Two reads, not one transaction: the event never changes, and the
	// endpoint is read as it is now, whatever snapshot the event came from.
	var ep *WebhookEndpoint
	var ev *Event
	err := e.readOne(ctx, func(ctx context.Context, tx Tx) (err error) {
		ep, err = tx.GetWebhookEndpoint(ctx, d.EndpointID)
		return err
	})
	if err != nil {
		return nil, err
	}
	err = e.readOne(ctx, func(ctx context.Context, tx Tx) (err error) {
		ev, err = tx.GetEvent(ctx, d.EventID)
		return err
	})
	if err != nil {
		return nil, err
	}
	secrets, err := e.endpointSecrets(ep)
	if err != nil {
		return nil, err
	}
	started := time.Now()
	postedURL := ep.URL
	res := e.cfg.Webhooks.Deliver(ctx, WebhookRequest{
		URL: ep.URL, MessageID: ev.ID, Timestamp: e.now(), Body: ev.Payload, Secrets: secrets,
	})
	took := time.Since(started)
	if ctx.Err() != nil && res.StatusCode == 0 {
		return nil, nil // cut off by shutdown, not answered
	}
	e.deliveries.posted(d.EndpointID, res, took, time.Now())
	return func(ctx context.Context) error { return e.recordPost(ctx, d, res, postedURL, took) }, nil
}

// recordPost records the outcome of a post, if this worker still holds the
// delivery's lease.
func (e *Engine) recordPost(ctx context.Context, d *Delivery, res WebhookResult, postedURL string, took time.Duration) error {
	// Outcomes share transactions (group commit, see txBatcher), ordered by
	// the endpoint whose row they lock.
	return e.posts.inTx(ctx, d.EndpointID, func(ctx context.Context, tx Tx, _ *sharedTx) error {
		// The delivery, then its endpoint: the outcome and the endpoint's
		// health are written from what is current, not from a stale read.
		cur, err := tx.LockDelivery(ctx, d.ID)
		if err != nil {
			return err
		}
		if cur.Status != DeliveryPending || cur.LeaseOwner != e.workerID || !cur.LeasedUntil.Equal(d.LeasedUntil) {
			return nil
		}
		ep, err := tx.LockWebhookEndpoint(ctx, cur.EndpointID)
		if err != nil {
			return err
		}
		now := e.now()
		failure := describeWebhookFailure(res, postedURL)
		if err := tx.CreateDeliveryAttempt(ctx, &DeliveryAttempt{
			DeliveryID: cur.ID, AttemptedAt: now, StatusCode: res.StatusCode, Error: failure, Duration: took,
		}); err != nil {
			return err
		}
		cur.Attempts++
		cur.LastStatusCode, cur.LastError = res.StatusCode, failure
		cur.LeaseOwner, cur.LeasedUntil, cur.UpdatedAt = "", time.Time{}, now
		endpointChanged, wasEnabled := false, ep.Enabled
		switch {
		case failure == "":
			cur.Status, cur.DeliveredAt = DeliveryDelivered, now
			if !ep.FailingSince.IsZero() {
				ep.FailingSince, endpointChanged = time.Time{}, true
			}
		case res.StatusCode == 410:
			cur.Status = DeliveryExhausted
			ep.Enabled, ep.DisabledReason, endpointChanged = false, "the endpoint answered 410 Gone", true
		default:
			if cur.Attempts > len(webhookRetrySchedule) {
				cur.Status = DeliveryExhausted
			} else {
				cur.NextAttemptAt = now.Add(nextWebhookDelay(cur.Attempts, res.RetryAfter))
			}
			if ep.FailingSince.IsZero() {
				ep.FailingSince, endpointChanged = now, true
			} else if now.Sub(ep.FailingSince) >= e.cfg.WebhookDisableAfter && ep.Enabled {
				ep.Enabled, endpointChanged = false, true
				ep.DisabledReason = fmt.Sprintf("every delivery failed since %s", FormatTime(ep.FailingSince))
			}
		}
		if endpointChanged {
			ep.UpdatedAt = now
			if err := tx.UpdateWebhookEndpoint(ctx, ep); err != nil {
				return err
			}
		}
		result, disabled := "delivered", wasEnabled && !ep.Enabled
		if failure != "" {
			result = "failed"
		}
		note(ctx, func(o Observer) { o.WebhookPosted(result, disabled) })
		return tx.UpdateDelivery(ctx, cur)
	})
}

// nextWebhookDelay is the wait after the given number of failed posts: the
// receiver's Retry-After if it sent one, else the contract's schedule with
// up to 10% jitter either way so retries do not arrive in lockstep.
func nextWebhookDelay(attempts int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(max(retryAfter, time.Second), maxRetryAfter)
	}
	base := webhookRetrySchedule[attempts-1]
	jitter := time.Duration((rand.Float64()*0.2 - 0.1) * float64(base))
	return base + jitter
}

// describeWebhookFailure says why a post to rawURL failed, "" for a 2xx
// answer. The URL in an error (net/http's "Post \"...\": ...") is redacted
// as the audit log keeps it: its query may carry the receiver's token, and
// this text is stored and shown to operators.
func describeWebhookFailure(res WebhookResult, rawURL string) string {
	switch {
	case res.Err != nil:
		text := res.Err.Error()
		var ue *url.Error
		if errors.As(res.Err, &ue) {
			text = replaceURL(text, ue.URL)
		}
		return replaceURL(text, rawURL)
	case res.StatusCode >= 200 && res.StatusCode < 300:
		return ""
	case res.StatusCode >= 300 && res.StatusCode < 400:
		return fmt.Sprintf("HTTP %d: redirects are not followed", res.StatusCode)
	}
	return fmt.Sprintf("HTTP %d", res.StatusCode)
}

// replaceURL redacts each occurrence of raw in text.
func replaceURL(text, raw string) string {
	if raw == "" {
		return text
	}
	redacted := RedactURL(raw)
	if redacted == "" {
		redacted = "(url)"
	}
	return strings.ReplaceAll(text, raw, redacted)
}
