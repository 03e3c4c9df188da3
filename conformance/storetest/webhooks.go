package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
)

func getEndpoint(t *testing.T, s Store, id string) *engine.WebhookEndpoint {
	t.Helper()
	return get(t, s, func(ctx context.Context, tx engine.Tx) (*engine.WebhookEndpoint, error) {
		return tx.GetWebhookEndpoint(ctx, id)
	})
}

func getDelivery(t *testing.T, s Store, id string) *engine.Delivery {
	t.Helper()
	return get(t, s, func(ctx context.Context, tx engine.Tx) (*engine.Delivery, error) { return tx.GetDelivery(ctx, id) })
}

func listDeliveries(t *testing.T, s Store, p engine.ListDeliveriesParams) []*engine.Delivery {
	t.Helper()
	return get(t, s, func(ctx context.Context, tx engine.Tx) ([]*engine.Delivery, error) { return tx.ListDeliveries(ctx, p) })
}

func listDeliveryAttempts(t *testing.T, s Store, deliveryID string) []*engine.DeliveryAttempt {
	t.Helper()
	return get(t, s, func(ctx context.Context, tx engine.Tx) ([]*engine.DeliveryAttempt, error) {
		return tx.ListDeliveryAttempts(ctx, deliveryID)
	})
}

func deliveryID(d *engine.Delivery) string { return d.ID }

func testWebhookEndpointRoundTrip(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	// Zero times and no previous secret.
	ep := newEndpoint("whe_1", "org_1")
	ep.Secret = []byte("sealed\x00\xff secret")
	ep.Enabled = false
	ep.DisabledReason = "created disabled"
	ep.UpdatedAt = base.Add(time.Microsecond)
	create(t, s, engine.Tx.CreateWebhookEndpoint, ep)
	got := getEndpoint(t, s, ep.ID)
	assertEqual(t, got, ep)
	if got.PreviousSecret != nil || !got.PreviousSecretExpiresAt.IsZero() || !got.FailingSince.IsZero() {
		t.Errorf("unset fields read back as %q, %v, %v", got.PreviousSecret, got.PreviousSecretExpiresAt, got.FailingSince)
	}

	// Every updatable field set.
	ep.URL = "https://other.example/h?x=1"
	ep.Secret, ep.PreviousSecret = []byte("sealed:new"), []byte("sealed\x00old")
	ep.PreviousSecretExpiresAt = base.Add(24 * time.Hour)
	ep.Enabled, ep.DisabledReason = true, ""
	ep.FailingSince = base.Add(time.Minute)
	ep.UpdatedAt = base.Add(time.Hour)
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.UpdateWebhookEndpoint(ctx, ep) })
	assertEqual(t, getEndpoint(t, s, ep.ID), ep)

	// And back to unset: the previous secret is nil again, not empty (the
	// engine tells a rotation by PreviousSecret != nil).
	ep.PreviousSecret, ep.PreviousSecretExpiresAt, ep.FailingSince = nil, time.Time{}, time.Time{}
	ep.Enabled, ep.DisabledReason = false, "endpoint answered 410"
	ep.UpdatedAt = base.Add(2 * time.Hour)
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.UpdateWebhookEndpoint(ctx, ep) })
	got = getEndpoint(t, s, ep.ID)
	assertEqual(t, got, ep)
	if got.PreviousSecret != nil {
		t.Errorf("cleared previous secret = %#v, want nil", got.PreviousSecret)
	}

	// The organization and creation time never change.
	moved := *ep
	moved.OrganizationID, moved.CreatedAt = "org_x", base.Add(time.Hour)
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.UpdateWebhookEndpoint(ctx, &moved) })
	assertEqual(t, getEndpoint(t, s, ep.ID), ep)
	wantLocked(t, s, ep, func(ctx context.Context, tx engine.Tx) (*engine.WebhookEndpoint, error) {
		return tx.LockWebhookEndpoint(ctx, ep.ID)
	})

	wantDuplicate(t, "duplicate endpoint ID", try(s, engine.Tx.CreateWebhookEndpoint, newEndpoint("whe_1", "org_1")))
	wantInternal(t, "endpoint of a missing organization",
		try(s, engine.Tx.CreateWebhookEndpoint, newEndpoint("whe_2", "org_missing")))
}

func testListWebhookEndpoints(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1", "org_2")
	var eps []*engine.WebhookEndpoint
	add := func(id, orgID string, created time.Duration, enabled bool) {
		ep := newEndpoint(id, orgID)
		ep.CreatedAt, ep.Enabled = base.Add(created), enabled
		eps = append(eps, ep)
	}
	add("whe_c", "org_1", 0, true)
	add("whe_a", "org_1", time.Second, false)
	add("whe_b", "org_1", time.Second, true) // ties with a: by ID
	add("whe_0", "org_1", 2*time.Second, false)
	add("whe_d", "org_1", -time.Second, true)
	add("whe_x", "org_2", -time.Hour, true)
	create(t, s, engine.Tx.CreateWebhookEndpoint, eps...)
	list := func(orgID string, enabledOnly bool) []*engine.WebhookEndpoint {
		t.Helper()
		return get(t, s, func(ctx context.Context, tx engine.Tx) ([]*engine.WebhookEndpoint, error) {
			return tx.ListWebhookEndpoints(ctx, orgID, enabledOnly)
		})
	}
	for _, c := range []struct {
		org         string
		enabledOnly bool
		want        string
	}{
		{"org_1", false, "d,c,a,b,0"},
		{"org_1", true, "d,c,b"},
		{"org_2", false, "x"},
		{"org_2", true, "x"},
		{"org_9", false, ""},
	} {
		if got := joinIDs(list(c.org, c.enabledOnly), func(ep *engine.WebhookEndpoint) string { return ep.ID }); got != c.want {
			t.Errorf("ListWebhookEndpoints(%s, %v) = %s, want %s", c.org, c.enabledOnly, got, c.want)
		}
	}
	assertEqual(t, list("org_1", false), []*engine.WebhookEndpoint{eps[4], eps[0], eps[1], eps[2], eps[3]})

	disabled := func() int {
		t.Helper()
		return get(t, s, func(ctx context.Context, tx engine.Tx) (int, error) { return tx.CountDisabledWebhookEndpoints(ctx) })
	}
	if got := disabled(); got != 2 {
		t.Errorf("CountDisabledWebhookEndpoints = %d, want 2 (a, 0)", got)
	}
	eps[1].Enabled, eps[5].Enabled = true, false
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		return errors.Join(tx.UpdateWebhookEndpoint(ctx, eps[1]), tx.UpdateWebhookEndpoint(ctx, eps[5]))
	})
	if got := disabled(); got != 2 {
		t.Errorf("CountDisabledWebhookEndpoints after enabling a and disabling x = %d, want 2 (0, x)", got)
	}
	eps[3].Enabled = true
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.UpdateWebhookEndpoint(ctx, eps[3]) })
	if got := disabled(); got != 1 {
		t.Errorf("CountDisabledWebhookEndpoints after enabling 0 = %d, want 1 (x)", got)
	}
}

func testDeliveryRoundTrip(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	ev := newEvent("evt_1", "org_1")
	ev.Payload = []byte("{\"a\":\"<&>\"}\x00\xff")
	// Zero times, as the engine creates a delivery that is due at once.
	d := newDelivery("dlv_1", "evt_1", "whe_1", "org_1")
	d.NextAttemptAt = time.Time{}
	mustWebhookRows(t, s, []*engine.WebhookEndpoint{newEndpoint("whe_1", "org_1"), newEndpoint("whe_2", "org_1")},
		[]*engine.Event{ev}, []*engine.Delivery{d})
	got := getDelivery(t, s, "dlv_1")
	assertEqual(t, got, d)
	if !got.NextAttemptAt.IsZero() || !got.LeasedUntil.IsZero() || !got.DeliveredAt.IsZero() {
		t.Errorf("zero times read back as %v, %v, %v", got.NextAttemptAt, got.LeasedUntil, got.DeliveredAt)
	}

	// Every field set at creation.
	full := &engine.Delivery{
		ID: "dlv_2", EventID: "evt_1", EndpointID: "whe_2", OrganizationID: "org_1",
		Status: engine.DeliveryExhausted, Attempts: 7, NextAttemptAt: base.Add(time.Hour),
		LeaseOwner: "worker-1", LeasedUntil: base.Add(time.Minute), LastStatusCode: 503, LastError: "HTTP 503: ☃",
		DeliveredAt: base.Add(2 * time.Hour), CreatedAt: base.Add(time.Second), UpdatedAt: base.Add(3 * time.Hour),
	}
	create(t, s, engine.Tx.CreateDelivery, full)
	assertEqual(t, getDelivery(t, s, "dlv_2"), full)

	// Every updatable field changed.
	d.Status, d.Attempts, d.NextAttemptAt = engine.DeliveryDelivered, 3, base.Add(5*time.Minute)
	d.LeaseOwner, d.LeasedUntil = "worker-2", base.Add(6*time.Minute)
	d.LastStatusCode, d.LastError = 204, "previous: timeout"
	d.DeliveredAt, d.UpdatedAt = base.Add(7*time.Minute), base.Add(8*time.Minute)
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.UpdateDelivery(ctx, d) })
	assertEqual(t, getDelivery(t, s, "dlv_1"), d)
	// The references and creation time never change.
	moved := *d
	moved.EventID, moved.EndpointID, moved.OrganizationID, moved.CreatedAt = "evt_x", "whe_x", "org_x", base.Add(time.Hour)
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.UpdateDelivery(ctx, &moved) })
	assertEqual(t, getDelivery(t, s, "dlv_1"), d)
	for _, want := range []*engine.Delivery{d, full} {
		wantLocked(t, s, want, func(ctx context.Context, tx engine.Tx) (*engine.Delivery, error) {
			return tx.LockDelivery(ctx, want.ID)
		})
	}

	// GetEvent reads the event back whole.
	assertEqual(t, get(t, s, func(ctx context.Context, tx engine.Tx) (*engine.Event, error) { return tx.GetEvent(ctx, "evt_1") }), ev)

	// One delivery of an event to an endpoint.
	create(t, s, engine.Tx.CreateWebhookEndpoint, newEndpoint("whe_3", "org_1"))
	wantDuplicate(t, "second delivery of evt_1 to whe_1",
		try(s, engine.Tx.CreateDelivery, newDelivery("dlv_3", "evt_1", "whe_1", "org_1")))
	wantDuplicate(t, "duplicate delivery ID", try(s, engine.Tx.CreateDelivery, newDelivery("dlv_1", "evt_1", "whe_3", "org_1")))
	// A missing reference is an internal error.
	for name, dl := range map[string]*engine.Delivery{
		"event":        newDelivery("dlv_4", "evt_x", "whe_3", "org_1"),
		"endpoint":     newDelivery("dlv_4", "evt_1", "whe_x", "org_1"),
		"organization": newDelivery("dlv_4", "evt_1", "whe_3", "org_x"),
	} {
		wantInternal(t, "delivery of a missing "+name, try(s, engine.Tx.CreateDelivery, dl))
	}
}

func testWebhookNotFound(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	mustWebhookRows(t, s, []*engine.WebhookEndpoint{newEndpoint("whe_1", "org_1")},
		[]*engine.Event{newEvent("evt_1", "org_1")}, []*engine.Delivery{newDelivery("dlv_1", "evt_1", "whe_1", "org_1")})
	wantAllNotFound(t, s, calls{
		"GetWebhookEndpoint": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetWebhookEndpoint(ctx, "whe_x")
			return err
		},
		"GetDelivery": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetDelivery(ctx, "dlv_x")
			return err
		},
		"GetEvent": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetEvent(ctx, "evt_x")
			return err
		},
	}, calls{
		"UpdateWebhookEndpoint": func(ctx context.Context, tx engine.Tx) error {
			return tx.UpdateWebhookEndpoint(ctx, newEndpoint("whe_x", "org_1"))
		},
		"DeleteWebhookEndpoint": func(ctx context.Context, tx engine.Tx) error {
			return tx.DeleteWebhookEndpoint(ctx, "whe_x")
		},
		"UpdateDelivery": func(ctx context.Context, tx engine.Tx) error {
			return tx.UpdateDelivery(ctx, newDelivery("dlv_x", "evt_1", "whe_1", "org_1"))
		},
		"LockWebhookEndpoint": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.LockWebhookEndpoint(ctx, "whe_x")
			return err
		},
		"LockDelivery": func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.LockDelivery(ctx, "dlv_x")
			return err
		},
	})
	// Lists of nothing are empty, not errors.
	if as := listDeliveryAttempts(t, s, "dlv_x"); len(as) != 0 {
		t.Errorf("ListDeliveryAttempts of a missing delivery = %v", as)
	}
	// An attempt of a missing delivery is an internal error.
	wantInternal(t, "attempt of a missing delivery",
		try(s, engine.Tx.CreateDeliveryAttempt, &engine.DeliveryAttempt{DeliveryID: "dlv_x", AttemptedAt: base}))
}

func testDeliveryAttempts(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	mustWebhookRows(t, s, []*engine.WebhookEndpoint{newEndpoint("whe_1", "org_1")},
		[]*engine.Event{newEvent("evt_1", "org_1"), newEvent("evt_2", "org_1")},
		[]*engine.Delivery{newDelivery("dlv_1", "evt_1", "whe_1", "org_1"), newDelivery("dlv_2", "evt_2", "whe_1", "org_1")})
	as := []*engine.DeliveryAttempt{
		{DeliveryID: "dlv_1", AttemptedAt: base.Add(time.Minute), StatusCode: 500, Error: "HTTP 500", Duration: 1234567891 * time.Nanosecond},
		{DeliveryID: "dlv_1", AttemptedAt: base, StatusCode: 0, Error: "dial tcp: connection refused ☃", Duration: 15 * time.Second},
		{DeliveryID: "dlv_2", AttemptedAt: base, StatusCode: 200, Duration: time.Millisecond},
		// Ties with the first: in the order recorded.
		{DeliveryID: "dlv_1", AttemptedAt: base.Add(time.Minute), StatusCode: 204},
	}
	create(t, s, engine.Tx.CreateDeliveryAttempt, as...)
	assertEqual(t, listDeliveryAttempts(t, s, "dlv_1"), []*engine.DeliveryAttempt{as[1], as[0], as[3]})
	assertEqual(t, listDeliveryAttempts(t, s, "dlv_2"), []*engine.DeliveryAttempt{as[2]})
}

func testListDeliveries(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1", "org_2")
	eps := []*engine.WebhookEndpoint{newEndpoint("whe_1", "org_1"), newEndpoint("whe_2", "org_1"), newEndpoint("whe_3", "org_2")}
	evs := []*engine.Event{newEvent("evt_1", "org_1"), newEvent("evt_2", "org_1"), newEvent("evt_3", "org_2")}
	var ds []*engine.Delivery
	add := func(id, eventID, endpointID, orgID, status string, created time.Duration) {
		d := newDelivery(id, eventID, endpointID, orgID)
		d.Status, d.CreatedAt = status, base.Add(created)
		ds = append(ds, d)
	}
	add("dlv_c", "evt_1", "whe_1", "org_1", engine.DeliveryPending, 0)
	add("dlv_b", "evt_1", "whe_2", "org_1", engine.DeliveryDelivered, time.Second)
	add("dlv_a", "evt_2", "whe_1", "org_1", engine.DeliveryExhausted, time.Second) // ties with b: by ID
	add("dlv_d", "evt_2", "whe_2", "org_1", engine.DeliveryPending, -time.Second)
	add("dlv_x", "evt_3", "whe_3", "org_2", engine.DeliveryPending, -time.Hour)
	mustWebhookRows(t, s, eps, evs, ds)
	for _, c := range []struct {
		p    engine.ListDeliveriesParams
		want string
	}{
		{engine.ListDeliveriesParams{}, "x,d,c,a,b"},
		{engine.ListDeliveriesParams{Limit: 2}, "x,d"},
		{engine.ListDeliveriesParams{Limit: -1}, "x,d,c,a,b"},
		{engine.ListDeliveriesParams{OrganizationID: "org_1"}, "d,c,a,b"},
		{engine.ListDeliveriesParams{OrganizationID: "org_1", Limit: 3}, "d,c,a"},
		{engine.ListDeliveriesParams{EventID: "evt_1"}, "c,b"},
		{engine.ListDeliveriesParams{EndpointID: "whe_1"}, "c,a"},
		{engine.ListDeliveriesParams{Status: engine.DeliveryPending}, "x,d,c"},
		{engine.ListDeliveriesParams{OrganizationID: "org_1", Status: engine.DeliveryPending}, "d,c"},
		{engine.ListDeliveriesParams{OrganizationID: "org_1", EventID: "evt_2", EndpointID: "whe_2", Status: engine.DeliveryPending}, "d"},
		{engine.ListDeliveriesParams{OrganizationID: "org_1", EventID: "evt_2", EndpointID: "whe_2", Status: engine.DeliveryExhausted}, ""},
		{engine.ListDeliveriesParams{OrganizationID: "org_2", EventID: "evt_1"}, ""},
		{engine.ListDeliveriesParams{OrganizationID: "org_9"}, ""},
	} {
		if got := joinIDs(listDeliveries(t, s, c.p), deliveryID); got != c.want {
			t.Errorf("ListDeliveries(%+v) = %s, want %s", c.p, got, c.want)
		}
	}
	assertEqual(t, listDeliveries(t, s, engine.ListDeliveriesParams{OrganizationID: "org_1"}), []*engine.Delivery{ds[3], ds[0], ds[2], ds[1]})
}

func testDeleteWebhookEndpointCascades(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1")
	mustWebhookRows(t, s,
		[]*engine.WebhookEndpoint{newEndpoint("whe_1", "org_1"), newEndpoint("whe_2", "org_1")},
		[]*engine.Event{newEvent("evt_1", "org_1"), newEvent("evt_2", "org_1")},
		[]*engine.Delivery{
			newDelivery("dlv_11", "evt_1", "whe_1", "org_1"), newDelivery("dlv_21", "evt_2", "whe_1", "org_1"),
			newDelivery("dlv_12", "evt_1", "whe_2", "org_1"),
		})
	var as []*engine.DeliveryAttempt
	for i, id := range []string{"dlv_11", "dlv_11", "dlv_21", "dlv_12"} {
		as = append(as, &engine.DeliveryAttempt{DeliveryID: id, AttemptedAt: base.Add(time.Duration(i) * time.Second), StatusCode: 500})
	}
	create(t, s, engine.Tx.CreateDeliveryAttempt, as...)

	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.DeleteWebhookEndpoint(ctx, "whe_1") })

	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		if _, err := tx.GetWebhookEndpoint(ctx, "whe_1"); err != engine.ErrNotFound {
			t.Errorf("deleted endpoint: %v, want ErrNotFound", err)
		}
		for _, id := range []string{"dlv_11", "dlv_21"} {
			if _, err := tx.GetDelivery(ctx, id); err != engine.ErrNotFound {
				t.Errorf("delivery %s of the deleted endpoint: %v, want ErrNotFound", id, err)
			}
		}
		// The other endpoint and the events stay.
		if _, err := tx.GetWebhookEndpoint(ctx, "whe_2"); err != nil {
			t.Errorf("other endpoint: %v", err)
		}
		for _, id := range []string{"evt_1", "evt_2"} {
			if _, err := tx.GetEvent(ctx, id); err != nil {
				t.Errorf("event %s after the delete: %v", id, err)
			}
		}
		return nil
	})
	for _, id := range []string{"dlv_11", "dlv_21"} {
		if got := listDeliveryAttempts(t, s, id); len(got) != 0 {
			t.Errorf("attempts of %s after the delete: %v", id, got)
		}
	}
	// The other endpoint's delivery and attempt stay.
	assertEqual(t, listDeliveries(t, s, engine.ListDeliveriesParams{OrganizationID: "org_1"}), []*engine.Delivery{getDelivery(t, s, "dlv_12")})
	assertEqual(t, listDeliveryAttempts(t, s, "dlv_12"), as[3:])
	if got := listDeliveries(t, s, engine.ListDeliveriesParams{EndpointID: "whe_1"}); len(got) != 0 {
		t.Errorf("deliveries of the deleted endpoint: %v", got)
	}

	err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		return tx.DeleteWebhookEndpoint(ctx, "whe_1")
	})
	wantNotFound(t, "second delete", err)
	// The same event can be delivered to a new endpoint of the same ID, and
	// the deliveries' IDs are free again with no attempts of the old ones.
	mustWebhookRows(t, s, []*engine.WebhookEndpoint{newEndpoint("whe_1", "org_1")}, nil,
		[]*engine.Delivery{newDelivery("dlv_11", "evt_1", "whe_1", "org_1"), newDelivery("dlv_21", "evt_2", "whe_1", "org_1")})
	for _, id := range []string{"dlv_11", "dlv_21"} {
		if got := listDeliveryAttempts(t, s, id); len(got) != 0 {
			t.Errorf("attempts of the new %s: %v", id, got)
		}
	}
}

// deliveryQueue seeds org_1, the endpoints whe_<name>, and for each
// delivery one event.
type deliveryQueue struct {
	eps []*engine.WebhookEndpoint
	evs []*engine.Event
	ds  []*engine.Delivery
}

func (q *deliveryQueue) endpoint(name string, enabled bool) {
	ep := newEndpoint("whe_"+name, "org_1")
	ep.Enabled = enabled
	q.eps = append(q.eps, ep)
}

func (q *deliveryQueue) add(name, endpoint, status string, nextAttempt time.Time, leasedUntil time.Time) {
	ev := newEvent("evt_"+name, "org_1")
	d := newDelivery("dlv_"+name, ev.ID, "whe_"+endpoint, "org_1")
	d.Status, d.NextAttemptAt = status, nextAttempt
	if !leasedUntil.IsZero() {
		d.LeaseOwner, d.LeasedUntil = "old", leasedUntil
	}
	q.evs = append(q.evs, ev)
	q.ds = append(q.ds, d)
}

func (q *deliveryQueue) create(t *testing.T, s Store) {
	t.Helper()
	mustOrgs(t, s, "org_1")
	mustWebhookRows(t, s, q.eps, q.evs, q.ds)
}

func testClaimDueDeliveries(t *testing.T, s Store) {
	now := base.Add(time.Hour)
	q := &deliveryQueue{}
	q.endpoint("1", true)
	q.endpoint("2", true)
	q.endpoint("off", false)
	q.add("a", "1", engine.DeliveryPending, now.Add(-time.Minute), time.Time{})
	q.add("b", "2", engine.DeliveryPending, now.Add(-2*time.Minute), time.Time{})
	q.add("c", "1", engine.DeliveryPending, now, time.Time{})                          // due exactly now
	q.add("d", "2", engine.DeliveryPending, now.Add(-time.Minute), time.Time{})        // ties with a: by ID
	q.add("e", "1", engine.DeliveryPending, now.Add(time.Microsecond), time.Time{})    // not yet due
	q.add("f", "2", engine.DeliveryPending, now.Add(-time.Hour), now.Add(time.Second)) // leased
	q.add("g", "1", engine.DeliveryPending, now.Add(-3*time.Minute), now)              // lease ran out now
	q.add("h", "1", engine.DeliveryDelivered, now.Add(-time.Hour), time.Time{})
	q.add("i", "2", engine.DeliveryExhausted, now.Add(-time.Hour), time.Time{})
	q.add("j", "off", engine.DeliveryPending, now.Add(-time.Hour), time.Time{}) // endpoint disabled
	q.add("k", "1", engine.DeliveryPending, time.Time{}, time.Time{})           // due since forever
	q.create(t, s)
	claim := func(p engine.ClaimParams) string {
		t.Helper()
		return claimIDs(t, s, claimDeliveries(0, nil), deliveryLease, p)
	}

	lease := drain(t, now, claim, "k,g,b", "a,d,c")

	for id, owner := range map[string]string{"dlv_a": "w2", "dlv_k": "w1", "dlv_e": "", "dlv_f": "old", "dlv_h": "", "dlv_j": ""} {
		if d := getDelivery(t, s, id); d.LeaseOwner != owner {
			t.Errorf("%s leased by %q, want %q", id, d.LeaseOwner, owner)
		}
	}

	// Once the leases run out the same rows, and now e and f, are due again;
	// the settled ones and the disabled endpoint's never are.
	p := engine.ClaimParams{Now: lease, Owner: "w3", LeasedUntil: lease.Add(time.Minute), Limit: 100}
	if got := claim(p); got != "k,f,g,b,a,d,c,e" {
		t.Errorf("claim after the leases ran out = %s, want k,f,g,b,a,d,c,e", got)
	}

	// Enabling the endpoint makes its deliveries claimable; settling a
	// delivery takes it out of the queue for good.
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		ep, err := tx.GetWebhookEndpoint(ctx, "whe_off")
		if err != nil {
			return err
		}
		ep.Enabled = true
		if err := tx.UpdateWebhookEndpoint(ctx, ep); err != nil {
			return err
		}
		d, err := tx.GetDelivery(ctx, "dlv_a")
		if err != nil {
			return err
		}
		d.Status, d.LeaseOwner, d.LeasedUntil = engine.DeliveryDelivered, "", time.Time{}
		return tx.UpdateDelivery(ctx, d)
	})
	p = engine.ClaimParams{Now: lease.Add(time.Hour), Owner: "w4", LeasedUntil: lease.Add(2 * time.Hour), Limit: 100}
	if got := claim(p); got != "k,f,j,g,b,d,c,e" {
		t.Errorf("claim after enabling whe_off and settling a = %s, want k,f,j,g,b,d,c,e", got)
	}
}

func testClaimDeliveriesPerEndpointAndExclude(t *testing.T, s Store) {
	now := base.Add(time.Hour)
	q := &deliveryQueue{}
	q.endpoint("A", true)
	q.endpoint("B", true)
	q.endpoint("C", true)
	// A: a00..a09, due a minute apart from an hour ago; B: b0, b1 due
	// between them; C: c0, c1, c2 due last.
	for i := range 10 {
		q.add(fmt.Sprintf("a%02d", i), "A", engine.DeliveryPending, now.Add(-time.Hour+time.Duration(i)*time.Minute), time.Time{})
	}
	q.add("b0", "B", engine.DeliveryPending, now.Add(-time.Hour+90*time.Second), time.Time{})
	q.add("b1", "B", engine.DeliveryPending, now.Add(-time.Hour+150*time.Second), time.Time{})
	// An in-flight delivery of B does not count against the cap.
	q.add("bx", "B", engine.DeliveryPending, now.Add(-2*time.Hour), now.Add(time.Hour))
	for i := range 3 {
		q.add(fmt.Sprintf("c%d", i), "C", engine.DeliveryPending, now.Add(-time.Duration(3-i)*time.Second), time.Time{})
	}
	q.create(t, s)

	type claimCase struct {
		perEndpoint, limit int
		exclude            []string
		want               string
	}
	// Each case claims from a fresh set of leases: the lease runs until the
	// next case's now.
	run := func(i int, c claimCase) {
		t.Helper()
		at := now.Add(time.Duration(i) * 2 * time.Hour)
		p := engine.ClaimParams{Now: at, Owner: fmt.Sprintf("w%d", i), LeasedUntil: at.Add(time.Hour), Limit: c.limit}
		if got := claimIDs(t, s, claimDeliveries(c.perEndpoint, c.exclude), deliveryLease, p); got != c.want {
			t.Errorf("claim %d (per endpoint %d, limit %d, exclude %v) = %s, want %s",
				i, c.perEndpoint, c.limit, c.exclude, got, c.want)
		}
	}
	// The first case runs while bx is leased; after it every lease has run
	// out, so bx is due first of all.
	run(0, claimCase{3, 100, nil, "a00,a01,b0,a02,b1,c0,c1,c2"})
	for i, c := range []claimCase{
		{3, 100, []string{}, "bx,a00,a01,b0,a02,b1,c0,c1,c2"},
		{3, 100, []string{"whe_C"}, "bx,a00,a01,b0,a02,b1"},
		{3, 100, []string{"whe_C", "whe_A", "whe_missing"}, "bx,b0,b1"},
		{3, 100, []string{"whe_A", "whe_B", "whe_C"}, ""},
		{3, 4, nil, "bx,a00,a01,b0"},
		{1, 100, nil, "bx,a00,c0"},
		{0, 100, []string{"whe_B", "whe_C"}, "a00,a01,a02,a03,a04,a05,a06,a07,a08,a09"},
		{-1, 5, nil, "bx,a00,a01,b0,a02"},
		{100, 3, []string{"whe_B"}, "a00,a01,a02"},
		{3, 0, nil, ""},
	} {
		run(i+1, c)
	}
}

// A with 10 due, B with 2, cap 3: 3 of A and 2 of B.
func testClaimDeliveriesPerEndpointCap(t *testing.T, s Store) {
	now := base.Add(time.Hour)
	q := &deliveryQueue{}
	q.endpoint("A", true)
	q.endpoint("B", true)
	for i := range 10 {
		q.add(fmt.Sprintf("a%d", i), "A", engine.DeliveryPending, now.Add(-time.Duration(20-i)*time.Minute), time.Time{})
	}
	q.add("b0", "B", engine.DeliveryPending, now.Add(-time.Minute), time.Time{})
	q.add("b1", "B", engine.DeliveryPending, now, time.Time{})
	q.create(t, s)
	claim := claimDeliveries(3, nil)
	p := engine.ClaimParams{Now: now, Owner: "w", LeasedUntil: now.Add(time.Minute), Limit: 100}
	if got := claimIDs(t, s, claim, deliveryLease, p); got != "a0,a1,a2,b0,b1" {
		t.Errorf("claim of A 10, B 2 with cap 3 = %s, want a0,a1,a2,b0,b1", got)
	}
	// The next claim, with the first's leases still held, takes the next
	// three of A.
	p.Owner = "w2"
	if got := claimIDs(t, s, claim, deliveryLease, p); got != "a3,a4,a5" {
		t.Errorf("second claim = %s, want a3,a4,a5", got)
	}
}

// A and B with 6 due each, cap 2: a fast endpoint's cap is its own.
func testClaimDeliveriesFastEndpoints(t *testing.T, s Store) {
	now := base.Add(time.Hour)
	q := &deliveryQueue{}
	q.endpoint("A", true)
	q.endpoint("B", true)
	for i := range 6 {
		q.add(fmt.Sprintf("a%d", i), "A", engine.DeliveryPending, now.Add(-time.Duration(20-2*i)*time.Minute), time.Time{})
		q.add(fmt.Sprintf("b%d", i), "B", engine.DeliveryPending, now.Add(-time.Duration(19-2*i)*time.Minute), time.Time{})
	}
	q.create(t, s)
	for i, c := range []struct {
		fast            []string
		fastPerEndpoint int
		limit           int
		want            string
	}{
		{[]string{"whe_A"}, 4, 100, "a0,b0,a1,b1,a2,a3"},
		{[]string{"whe_B", "whe_missing"}, 5, 100, "a0,b0,a1,b1,b2,b3,b4"},
		{[]string{"whe_A", "whe_B"}, 3, 4, "a0,b0,a1,b1"},
		{[]string{"whe_A"}, 0, 100, "a0,b0,a1,b1"}, // no fast cap: PerEndpoint for all
		{nil, 4, 100, "a0,b0,a1,b1"},
		{[]string{"whe_A"}, 100, 3, "a0,b0,a1"},
	} {
		at := now.Add(time.Duration(i) * 2 * time.Hour)
		p := engine.ClaimParams{Now: at, Owner: fmt.Sprintf("w%d", i), LeasedUntil: at.Add(time.Hour), Limit: c.limit}
		if got := claimIDs(t, s, claimDeliveriesFast(2, c.fast, c.fastPerEndpoint), deliveryLease, p); got != c.want {
			t.Errorf("claim %d (cap 2, fast %v at %d, limit %d) = %s, want %s", i, c.fast, c.fastPerEndpoint, c.limit, got, c.want)
		}
	}
}
