// Package paydmock holds test doubles of what a host implements or stubs
// for payd, with function fields (WTF's mock package): a test sets the
// functions its code will call, and a call to one left nil panics, naming
// it.
//
//   - Provider is an engine.Provider and an engine.LateLearner (its
//     optional capability, NotFoundGraceFunc). A fake of another optional
//     capability (payd.PublicURLSetter, payd.StoreJoiner, ...) is a type
//     of the test's that embeds Provider and adds the method.
//   - WebhookClient is an engine.WebhookClient: payd's webhook sender,
//     whose posts a test sees without a server.
//   - The clock needs no fake here: engine.Config.Clock and payd.Config.Clock
//     take a github.com/benbjohnson/clock Clock, and clock.NewMock() is the
//     test's.
//
// # payd in a host's tests
//
// paydtest runs a whole payd for a test (payd's App over a SQLite file in
// a temporary directory, behind a real HTTP server), and a host's tests
// may use it as payd's own do:
//
//	s := paydtest.MustOpen(t, paydtest.WithProvider(provider))  // mock clock; the test drives the engine
//	s := paydtest.MustRunMain(t)                                // wall clock, background work running
//	org := s.NewOrg(engine.OrganizationSettings{})
//	d, _, err := s.Engine.CreateDeposit(ctx, engine.CreateDepositParams{OrganizationID: org.ID, ...})
//
// with the sandbox provider by default (paydtest.WithSandbox), or a
// Provider of this package (paydtest.WithProvider), and a WebhookClient
// to see the webhooks (paydtest.WithWebhooks; a paydtest.Receiver is a
// real receiving server). For the engine alone, engine.New takes a
// Provider of this package and a store (sqlite.Open on a file in
// t.TempDir()).
package paydmock
