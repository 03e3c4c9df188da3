package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Error codes of the contract, the values of Error.Code. Branch on these,
// never on Message, which is meant for logs and display.
const (
	// CodeInvalidRequest (400): the body, a field, or the signature input
	// is invalid; Message names the field ("amount: ...").
	CodeInvalidRequest = "invalid_request"
	// CodeUnauthorized (401): API key or H2H signature missing, stale or
	// invalid; Message is the reason (e.g. "stale_signature").
	CodeUnauthorized = "unauthorized"
	// CodeForbidden (403): deposits, H2H or withdrawals are not enabled for
	// the organization.
	CodeForbidden = "forbidden"
	// CodeNotFound (404): no such resource in the key's organization.
	CodeNotFound = "not_found"
	// CodeMerchantIDConflict (409, create deposit): the merchant_id exists
	// with different immutable fields.
	CodeMerchantIDConflict = "merchant_id_conflict"
	// CodeMerchantIDExists (409, create withdrawal): the merchant_id was
	// already used; no second payout was created.
	CodeMerchantIDExists = "merchant_id_exists"
	// CodeInsufficientBalance (403, create withdrawal): the available
	// balance does not cover amount plus commission.
	CodeInsufficientBalance = "insufficient_balance"
	// CodeMethodUnavailable (503): the payment or payout method is
	// temporarily unavailable.
	CodeMethodUnavailable = "method_unavailable"
	// CodeDepositTerminal (409, verify): the deposit is terminal or its
	// deadline passed.
	CodeDepositTerminal = "deposit_terminal"
	// CodeAttemptInProgress (409, verify): another transaction ID is being
	// checked; wait for it before submitting a new one.
	CodeAttemptInProgress = "attempt_in_progress"
	// CodeAttemptLimitReached (409, verify): three distinct transaction IDs
	// were already submitted.
	CodeAttemptLimitReached = "attempt_limit_reached"
	// CodeTransactionIDUsed (409, verify): the transaction ID was already
	// submitted for another deposit of the organization on the same
	// channel, or it succeeded a deposit of any organization.
	CodeTransactionIDUsed = "transaction_id_used"
	// CodeRedirectAction (409, verify): the deposit's next action is a
	// redirect, which is never verified by transaction ID.
	CodeRedirectAction = "redirect_action"
	// CodeDatabaseUnavailable (503, any): no writable database for a
	// moment (a failover); see Error.RetryAfter. The calls retry it. A
	// write answered this way may or may not have been made: repeat it as
	// it was (CreateWithdrawal finds its own withdrawal).
	CodeDatabaseUnavailable = "database_unavailable"
	// CodeVerificationUnavailable (503, verify): verification could not be
	// queued; retry with the same transaction ID.
	CodeVerificationUnavailable = "verification_unavailable"
	// CodeDepositNotRefundable (409, refund): the deposit is not
	// succeeded (or is already refunded).
	CodeDepositNotRefundable = "deposit_not_refundable"
	// CodeRefundExceedsDeposit (409, refund): more than the deposit has
	// left to refund.
	CodeRefundExceedsDeposit = "refund_exceeds_deposit"
	// CodeRateLimited (429): too many requests; see Error.RetryAfter.
	CodeRateLimited = "rate_limited"
	// CodeRequestTooLarge (413): the body is over 64 KiB.
	CodeRequestTooLarge = "request_too_large"
	// CodeInternal (500): an unexpected server error.
	CodeInternal = "internal_error"
)

// Error is a non-2xx answer of the server. It carries the HTTP status and
// the {"error":{"code","message"}} envelope, so callers branch on Code with
// IsCode or errors.As.
type Error struct {
	// StatusCode is the HTTP status of the answer.
	StatusCode int
	// Code is error.code of the envelope, one of the Code constants; ""
	// when the body was not the envelope (e.g. a proxy's error page).
	Code string
	// Message is error.message, for logs and display (for a body that was
	// not the envelope, a short excerpt of it or the status text).
	Message string
	// RetryAfter is the server's Retry-After (429 and 503), 0 if absent.
	RetryAfter time.Duration
	// Retried is true when an earlier attempt of the same call failed on
	// the network or answered 503, so the server may have processed that
	// attempt. CreateWithdrawal uses it: merchant_id_exists with Retried
	// set may mean the lost attempt created the withdrawal.
	Retried bool
}

// Error formats the status, code and message.
func (e *Error) Error() string {
	code := e.Code
	if code == "" {
		code = "no error code"
	}
	return fmt.Sprintf("payd: %d %s: %s", e.StatusCode, code, e.Message)
}

// IsCode reports whether err is (or wraps) an *Error with the given code.
func IsCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// maxMessage bounds the excerpt of a body that is not the error envelope.
const maxMessage = 200

// newError builds the *Error of a non-2xx answer from its status, headers
// and (already bounded) body.
func newError(status int, header http.Header, body []byte) *Error {
	e := &Error{StatusCode: status, RetryAfter: parseRetryAfter(header.Get("Retry-After"), time.Now())}
	var env struct {
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &env) == nil && env.Error != nil && env.Error.Code != "" {
		e.Code, e.Message = env.Error.Code, env.Error.Message
		return e
	}
	e.Message = excerpt(body)
	if e.Message == "" {
		e.Message = http.StatusText(status)
	}
	return e
}

// excerpt returns the start of a body as one printable line.
func excerpt(body []byte) string {
	s := strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(string(body), "?")))
	if len(s) > maxMessage {
		s = strings.ToValidUTF8(s[:maxMessage], "") + "..."
	}
	return s
}

// parseRetryAfter reads a Retry-After value: delay seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		if secs > int64(24*time.Hour/time.Second) {
			secs = int64(24 * time.Hour / time.Second)
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
