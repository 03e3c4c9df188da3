package transport

// Error codes only the HTTP layer causes: the engine never sees a body's
// size, a request rate or a method. statusByCode maps them with the
// engine's codes.
const (
	codeRequestTooLarge  = "request_too_large"
	codeRateLimited      = "rate_limited"
	codeMethodNotAllowed = "method_not_allowed"
)
