package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
)

func testEventRoundTrip(t *testing.T, s Store) {
	mustOrgs(t, s, "org_1", "org_2")
	payload := []byte(`{"id":"evt_1","data":{"amount":"1.10","note":"<&>☃"}}` + "\x00\xff\n")
	evs := []*engine.Event{
		{ID: "evt_1", OrganizationID: "org_1", Type: engine.EventDepositSucceeded, ResourceID: "dep_1", Payload: payload, CreatedAt: base.Add(time.Second)},
		{ID: "evt_2", OrganizationID: "org_1", Type: engine.EventDepositFailed, ResourceID: "dep_2", Payload: []byte(`{}`), CreatedAt: base},
		{ID: "evt_0", OrganizationID: "org_1", Type: engine.EventDepositExpired, ResourceID: "dep_1", Payload: []byte(`[]`), CreatedAt: base.Add(time.Second)},
		{ID: "evt_3", OrganizationID: "org_2", Type: engine.EventDepositSucceeded, ResourceID: "dep_3", CreatedAt: base.Add(time.Hour)},
		{ID: "evt_4", OrganizationID: "org_1", Type: engine.EventDepositSucceeded, ResourceID: "dep_1", Payload: []byte(`{"n":4}`), CreatedAt: base.Add(time.Minute)},
	}
	create(t, s, engine.Tx.CreateEvent, evs...)
	list := func(p engine.ListEventsParams) []*engine.Event {
		t.Helper()
		return get(t, s, func(ctx context.Context, tx engine.Tx) ([]*engine.Event, error) { return tx.ListEvents(ctx, p) })
	}
	for _, c := range []struct {
		p    engine.ListEventsParams
		want string
	}{
		{engine.ListEventsParams{}, "2,0,1,4,3"},
		{engine.ListEventsParams{Limit: 2}, "2,0"},
		{engine.ListEventsParams{OrganizationID: "org_1"}, "2,0,1,4"},
		{engine.ListEventsParams{OrganizationID: "org_1", ResourceID: "dep_1"}, "0,1,4"},
		{engine.ListEventsParams{OrganizationID: "org_1", ResourceID: "dep_1", Limit: 2}, "0,1"},
		{engine.ListEventsParams{OrganizationID: "org_2", ResourceID: "dep_1"}, ""},
		{engine.ListEventsParams{ResourceID: "dep_3"}, "3"},
		{engine.ListEventsParams{OrganizationID: "org_9"}, ""},
	} {
		if got := joinIDs(list(c.p), func(e *engine.Event) string { return e.ID }); got != c.want {
			t.Errorf("ListEvents(%+v) = %s, want %s", c.p, got, c.want)
		}
	}
	byID := map[string]*engine.Event{}
	for _, e := range list(engine.ListEventsParams{}) {
		byID[e.ID] = e
	}
	for _, want := range evs {
		assertEqual(t, byID[want.ID], want)
	}
	if got := get(t, s, func(ctx context.Context, tx engine.Tx) (*engine.Event, error) { return tx.GetEvent(ctx, "evt_1") }); string(got.Payload) != string(payload) {
		t.Errorf("payload = %q, want %q", got.Payload, payload)
	}

	wantDuplicate(t, "duplicate event",
		try(s, engine.Tx.CreateEvent, &engine.Event{ID: "evt_1", OrganizationID: "org_2", Payload: []byte("x"), CreatedAt: base}))
}
