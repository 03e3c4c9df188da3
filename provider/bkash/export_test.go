package bkash

// The per-request queries, for the plan tests.
const (
	PaymentByTrxQuery = `SELECT ` + paymentColumns + ` FROM bkash_payments WHERE ` + paymentByTrx
	DuePaymentsQuery  = duePayments
)
