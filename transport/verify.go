package transport

import (
	"net/http"

	"github.com/payd-engine/payd/engine"
)

// queuedAttempt is the 202 answer of verify: the attempt is still running.
type queuedAttempt struct {
	DepositID             string `json:"deposit_id"`
	AttemptID             string `json:"attempt_id"`
	ProviderTransactionID string `json:"provider_transaction_id"`
	Status                string `json:"status"`
	AttemptsUsed          int    `json:"attempts_used"`
	AttemptsRemaining     int    `json:"attempts_remaining"`
}

// resolvedAttempt is the 200 answer of verify: a repeat of a finished attempt.
type resolvedAttempt struct {
	DepositID             string  `json:"deposit_id"`
	AttemptID             string  `json:"attempt_id"`
	ProviderTransactionID string  `json:"provider_transaction_id"`
	Status                string  `json:"status"`
	AttemptStatus         string  `json:"attempt_status"`
	DepositStatus         string  `json:"deposit_status"`
	FailureCode           *string `json:"failure_code"`
}

// verifyDeposit serves POST /v1/deposits/{id}/verify: always signed.
func (s *server) verifyDeposit(w http.ResponseWriter, r *http.Request) error {
	p, err := s.admit(w, r, classVerify)
	if err != nil {
		return err
	}
	body, err := readBody(r.Body, MaxBodyBytes)
	if err != nil {
		return err
	}
	if err := s.checkSignature(r, p, body); err != nil {
		return err
	}
	o, err := parseObject(body)
	if err != nil {
		return err
	}
	if err := o.allow("provider_transaction_id"); err != nil {
		return err
	}
	txID, err := o.string("provider_transaction_id", true)
	if err != nil {
		return err
	}
	id, err := pathID(r, "deposit")
	if err != nil {
		return err
	}
	v, err := s.engine.SubmitTransactionID(r.Context(), engine.VerifyParams{
		OrganizationID: p.OrganizationID, DepositID: id, TransactionID: txID,
	})
	if err != nil {
		return err
	}
	a, d := v.Attempt, v.Deposit
	if a.Running() {
		writeJSON(w, http.StatusAccepted, queuedAttempt{
			DepositID: d.ID, AttemptID: a.ID, ProviderTransactionID: a.TransactionID,
			Status: engine.AttemptProcessing, AttemptsUsed: d.AttemptsUsed, AttemptsRemaining: d.AttemptsRemaining(),
		})
		return nil
	}
	res := resolvedAttempt{
		DepositID: d.ID, AttemptID: a.ID, ProviderTransactionID: a.TransactionID,
		Status: "resolved", AttemptStatus: a.Status, DepositStatus: d.Status,
	}
	if a.FailureCode != "" {
		res.FailureCode = &a.FailureCode
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
