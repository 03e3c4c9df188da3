package smsinbox

// The queries a test checks the plans of.
const (
	DeviceByIDQuery = deviceByIDQuery
	SMSByIDQuery    = smsByIDQuery

	SMSByFingerprintQuery = smsByFingerprintQuery
)

var SMSByTransactionQuery = smsByTransactionQuery(dialects["postgres"])
