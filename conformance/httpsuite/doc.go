// Package httpsuite is a black-box conformance suite for a running payd
// deployment: it checks the HTTP API against the interface description
// (docs/spec/interface-v1.1.0.md) and the contract (docs/spec/contract.md),
// and knows nothing of the server's code.
//
// Run(t, target) creates its own organizations through target.Hooks (the
// operator's side, which the /v1 API does not cover), then checks, in
// subtests: response shapes and JSON types against the interface's field
// tables (exact key sets, two-decimal amounts, RFC 3339 UTC times, typed
// identifiers), status codes, error codes and messages, H2H request
// signing, idempotency by merchant_id (also under concurrent requests),
// organization isolation, verification outcomes and withdrawals played
// through the sandbox provider, and Standard Webhooks deliveries.
//
// It runs three ways:
//
//   - in go test, against an in-process reference server (httpsuite_test.go);
//   - in go test against any deployment:
//     go test ./conformance/httpsuite/ -args -base-url http://host:port/api -payd-binary /abs/payd -db DSN [-webhooks]
//     (absolute paths: go test runs in the package directory);
//   - without go test: payd conformance --base-url URL --db DSN [--webhooks].
//
// Checks that need the sandbox provider (payments played as the payer,
// settled payouts, webhooks) skip, saying why, on a deployment without it;
// no withdrawal is accepted there, since it would send a real payout.
package httpsuite
