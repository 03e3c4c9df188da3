package smsinbox

import (
	"time"

	"github.com/payd-engine/payd/engine"
)

// DefaultNotFoundGrace is Config.NotFoundGrace's default: an SMS usually
// reaches the receiving phone, and its forwarder payd, within seconds of the
// payment, rarely after a minute or two.
const DefaultNotFoundGrace = 2 * time.Minute

var _ engine.LateLearner = (*Provider)(nil)

// NotFoundGrace makes the inbox an engine.LateLearner: the SMS that proves a
// payment can reach payd after its payer submitted the transaction ID. For
// this long after the submission the attempt waits for it (and is looked up
// the moment it is accepted); then it fails transaction_not_found and the
// payer may submit another ID. An SMS accepted later still is not lost: the
// engine reopens the failed attempt while its deposit is open
// (engine.RecheckTransaction), and otherwise lists it for the operator
// (ListUnmatched), who credits it once (engine.CreditLatePayment).
func (p *Provider) NotFoundGrace() time.Duration { return p.grace }
