package engine

import "context"

// GetWithdrawalByMerchantID returns the organization's withdrawal created
// with merchantID, or not_found. A client whose create was answered
// 409 merchant_id_exists after a retry (its first request was applied but
// the answer lost) finds its withdrawal this way.
func (e *Engine) GetWithdrawalByMerchantID(ctx context.Context, orgID, merchantID string) (*Withdrawal, error) {
	if merchantID == "" {
		return nil, Invalid("merchant_id", "is required")
	}
	if len(merchantID) > maxMerchantIDLength || checkText("merchant_id", merchantID) != nil {
		// No withdrawal can have been created with it.
		return nil, Errorf(CodeNotFound, "withdrawal not found")
	}
	var w *Withdrawal
	err := e.store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		w, err = tx.GetWithdrawalByMerchantID(ctx, orgID, merchantID)
		return notFound(err, "withdrawal")
	})
	return w, err
}
