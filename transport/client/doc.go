// Package client is the Go client of the payd /v1 API for merchants: typed
// requests and responses, H2H request signing, retries that are safe by
// construction, polling with the interface's backoff, and verification of
// webhook deliveries.
//
// It uses only the standard library and payd's own transport/signing and
// transport/webhook packages, so that the signature a merchant computes is
// byte for byte the one the server checks.
//
// # The H2H flow
//
// Create the deposit (signed), show the payer the instructions exactly as
// returned, submit the transaction ID the payer gives you, then wait for a
// terminal status. Only a "succeeded" status (or a verified
// deposit.succeeded webhook) proves payment:
//
//	c := client.New("https://pay.example.com/api", apiKey, signingSecret)
//	dep, _, err := c.CreateH2HDeposit(ctx, client.H2HDepositRequest{
//		Amount: "750.50", PaymentMethod: "bkash_agent", MerchantID: "order-1002",
//		RedirectURL: "https://shop.example/return", PayerPhone: "01712345678",
//	})
//	if err != nil {
//		return err // *client.Error for an answer of the server
//	}
//	switch na := dep.NextAction; {
//	case na == nil:
//		// nothing to pay (the deposit is terminal or expired)
//	case na.Type == client.ActionDisplayInstructions:
//		show(na.Channel, na.Operation, na.Recipient.Value, na.Amount) // render as returned
//		txID := askPayer()
//		if _, err := c.SubmitTransactionID(ctx, dep.ID, txID); err != nil {
//			return err
//		}
//	case na.Type == client.ActionRedirect:
//		redirectPayer(na.URL) // and never call SubmitTransactionID
//	}
//	dep, err = c.WaitForDeposit(ctx, dep.ID, client.WaitOptions{})
//	if err == nil && dep.Succeeded() {
//		fulfil(dep.MerchantID)
//	}
//
// # Retries
//
// A call is retried (up to WithRetries times, 3 by default) when the
// request fails on the network (connection refused or reset, timeouts, a
// response lost on the way back) and when the server answers 429 or 503,
// honouring Retry-After. Every retry carries the same body with a fresh
// timestamp and signature. This is safe because every operation is
// idempotent on the server: deposit creates by merchant_id (a replay answers
// 200 with the same deposit), verification by transaction ID, reads
// trivially. Withdrawal creates are the exception the contract makes: a
// reused merchant_id is 409 merchant_id_exists and never a second payout,
// so when a retried create is answered that way after a lost answer,
// CreateWithdrawal looks the withdrawal up by merchant_id and returns it
// if it is the one requested. No other 4xx answer is ever retried.
//
// During a database failover the server answers 503 database_unavailable
// with Retry-After; the calls wait and retry. A write answered 503 may
// have been made: repeat it unchanged (a deposit create answers the same
// deposit, a withdrawal create finds its own), never under a new
// merchant_id.
package client
