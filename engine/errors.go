package engine

import (
	"errors"
	"fmt"
)

// Error codes. They are the wire codes of the contract, so the transport maps
// each to an HTTP status with one table (a test there proves every code here
// has one) and clients branch on them. Codes only HTTP can cause (a body too
// large, a rate, a method) belong to the transport.
const (
	CodeInvalidRequest          = "invalid_request"
	CodeUnauthorized            = "unauthorized"
	CodeForbidden               = "forbidden"
	CodeNotFound                = "not_found"
	CodeMerchantIDConflict      = "merchant_id_conflict"
	CodeMethodUnavailable       = "method_unavailable"
	CodeInternal                = "internal_error"
	CodeDepositTerminal         = "deposit_terminal"
	CodeAttemptInProgress       = "attempt_in_progress"
	CodeAttemptLimitReached     = "attempt_limit_reached"
	CodeTransactionIDUsed       = "transaction_id_used"
	CodeRedirectAction          = "redirect_action"
	CodeVerificationUnavailable = "verification_unavailable"
	CodeInsufficientBalance     = "insufficient_balance"
	CodeMerchantIDExists        = "merchant_id_exists"
	CodeDatabaseUnavailable     = "database_unavailable"
	// Refunds (the contract's extension).
	CodeDepositNotRefundable = "deposit_not_refundable"
	CodeRefundExceedsDeposit = "refund_exceeds_deposit"
	// CodeConflict is a 409 outside the contract's list (sandbox controls).
	CodeConflict = "conflict"
)

// Reasons carried in the message of an unauthorized error; the contract fixes
// them so clients and logs can tell the cases apart. The signature reasons
// are transport/signing's errors: only HTTP requests are signed.
const (
	ReasonMissingAPIKey = "missing_api_key"
	ReasonInvalidAPIKey = "invalid_api_key"
)

// Error is an error a caller of the engine is meant to see: a contract code and
// a message safe to show. Any other error is internal.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns an invalid_request error shaped "<field>: <reason>".
func Invalid(field, reason string) *Error {
	return &Error{Code: CodeInvalidRequest, Message: field + ": " + reason}
}

// ErrorCode returns the code of err if it is (or wraps) an *Error,
// database_unavailable for ErrUnavailable, and internal_error otherwise.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if errors.Is(err, ErrUnavailable) {
		return CodeDatabaseUnavailable
	}
	return CodeInternal
}

// Store errors. A Store returns these (wrapped or not) so the engine can
// decide without knowing the database.
var (
	// ErrNotFound is returned when a row does not exist.
	ErrNotFound = errors.New("not found")
	// ErrDuplicate is returned when an insert or update violates a uniqueness
	// constraint. Idempotency rests on these constraints, not on reads.
	ErrDuplicate = errors.New("duplicate")
	// ErrLeaseLost is returned by a write made on condition that a worker
	// still holds a row's lease, when it does not: the lease ran out and
	// another worker claimed the row, or the row left the state the lease
	// was for.
	ErrLeaseLost = errors.New("lease lost")
	// ErrUnavailable is returned when the database cannot take the
	// transaction now: no writable primary is reachable (it is down,
	// restarting, or a standby not yet promoted), or the connection was
	// lost mid-transaction. A commit that failed this way may or may not
	// have happened; the caller may try again later, and the operations'
	// idempotency makes that safe. The transport answers it with 503
	// database_unavailable.
	ErrUnavailable = errors.New("database unavailable")
)

// UnavailableError returns the contract's error for err when err is (or
// wraps) ErrUnavailable, and nil otherwise: nothing of the driver's error,
// which is for the log.
func UnavailableError(err error) *Error {
	if errors.Is(err, ErrUnavailable) {
		return &Error{Code: CodeDatabaseUnavailable, Message: "the database is unavailable; try again in a moment"}
	}
	return nil
}
