package transport_test

import (
	"context"
	"testing"
	"time"

	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/provider/smsinbox"
)

// harness is paydtest's server on a mock clock, with this package's test
// helpers as methods.
type harness struct {
	*paydtest.Server
	t *testing.T
}

func newHarness(t *testing.T, opts ...paydtest.Option) *harness {
	t.Helper()
	return &harness{paydtest.MustOpen(t, opts...), t}
}

type (
	testOrg  = paydtest.Org
	request  = paydtest.Request
	response = paydtest.Response
	kv       = paydtest.KV
)

var (
	str        = paydtest.Str
	h2h        = paydtest.H2H
	redirect   = paydtest.Redirect
	withdrawal = paydtest.Withdrawal
	mustJSON   = paydtest.MustJSON
)

const drop = paydtest.Drop

func ptr[T any](v T) *T { return &v }

// newInboxHarness is a harness with the SMS inbox provider.
func newInboxHarness(t *testing.T) *harness {
	t.Helper()
	return newHarness(t, paydtest.WithSMSInbox(smsinbox.Config{Silence: 5 * time.Minute}))
}

// addDevice registers a phone that receives the SMS of wallets, as payd
// admin device add does, and returns its token.
func (h *harness) addDevice(org *testOrg, wallets ...string) string {
	h.t.Helper()
	creds, err := h.Inbox.AddDevice(context.Background(), smsinbox.AddDeviceParams{OrganizationID: org.ID, WalletIDs: wallets})
	if err != nil {
		h.t.Fatal(err)
	}
	return creds.Token
}
