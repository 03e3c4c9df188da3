package transport

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/payd-engine/payd/engine"
)

// The lists, payd's extensions for reconciliation: GET /v1/deposits, /v1/withdraws,
// /v1/events, /v1/events/{id} and /v1/balance/transactions, newest first,
// Stripe's way: {"data": [...], "has_more": bool}, limit (1-100, default
// 10), starting_after / ending_before naming a row of the list. Each item is
// exactly the body of the resource's own GET (an event: its webhook body).
// An organization that takes H2H deposits signs every list that shows
// deposits (deposits, events, balance transactions), as it signs GET
// /v1/deposits/{id}; the engine says which pages are signed
// (engine.Page.Signed). Withdrawals are bearer only, as their own GET.

// MaxListLimit is the largest page the API serves.
const MaxListLimit = 100

// listBody is the answer of every list.
type listBody struct {
	Data    []any `json:"data"`
	HasMore bool  `json:"has_more"`
}

// Query parameters, and which list takes which.
const (
	paramLimit         = "limit"
	paramStartingAfter = "starting_after"
	paramEndingBefore  = "ending_before"
	paramCreatedGTE    = "created[gte]"
	paramCreatedLT     = "created[lt]"
)

var (
	pagingParams   = []string{paramLimit, paramStartingAfter, paramEndingBefore, paramCreatedGTE, paramCreatedLT}
	resourceParams = append([]string{"status", "payment_method", "merchant_id", "provider_transaction_id"}, pagingParams...)
	eventParams    = append([]string{"type", "resource_id"}, pagingParams...)
	balanceParams  = append([]string{"account"}, pagingParams...)
)

// parseList reads a list's query: every parameter known to the list, given
// once, well formed; anything else is 400 naming the parameter.
func parseList(r *http.Request, orgID string, allowed []string) (engine.ListParams, error) {
	p := engine.ListParams{OrganizationID: orgID, Limit: engine.DefaultPageLimit}
	query, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return p, engine.Invalid("query", "must be a valid query string")
	}
	known := map[string]bool{}
	for _, name := range allowed {
		known[name] = true
	}
	for name, values := range query {
		if !known[name] {
			return p, engine.Invalid(name, "unknown query parameter")
		}
		if len(values) > 1 {
			return p, engine.Invalid(name, "must be given once")
		}
		if values[0] == "" {
			return p, engine.Invalid(name, "must not be empty")
		}
	}
	text := map[string]*string{
		paramStartingAfter: &p.StartingAfter, paramEndingBefore: &p.EndingBefore,
		"status": &p.Status, "payment_method": &p.PaymentMethod, "merchant_id": &p.MerchantID,
		"provider_transaction_id": &p.ProviderTransactionID, "type": &p.Type, "resource_id": &p.ResourceID,
		"account": &p.Account,
	}
	for name, dst := range text {
		*dst = query.Get(name)
	}
	if v := query.Get(paramLimit); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxListLimit || strconv.Itoa(n) != v {
			return p, engine.Invalid(paramLimit, "must be an integer from 1 to "+strconv.Itoa(MaxListLimit))
		}
		p.Limit = n
	}
	for name, dst := range map[string]*time.Time{paramCreatedGTE: &p.CreatedGTE, paramCreatedLT: &p.CreatedLT} {
		if v := query.Get(name); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return p, engine.Invalid(name, "must be an RFC 3339 time, e.g. 2025-03-14T09:00:00Z")
			}
			*dst = t
		}
	}
	return p, nil
}

// signIfH2H asks for the signature of a read that shows H2H deposits
// (signed, as the engine decides), with the very answers of GET
// /v1/deposits/{id}: every signed read goes through it.
func (s *server) signIfH2H(r *http.Request, p *engine.Principal, signed bool) error {
	if !signed {
		return nil
	}
	return s.checkSignature(r, p, nil)
}

// listDeposits serves GET /v1/deposits.
func (s *server) listDeposits(w http.ResponseWriter, r *http.Request) error {
	p, err := s.admit(w, r, classDefault)
	if err != nil {
		return err
	}
	lp, err := parseList(r, p.OrganizationID, resourceParams)
	if err != nil {
		return err
	}
	page, err := s.engine.ListDeposits(r.Context(), lp)
	if err != nil {
		return err
	}
	if err := s.signIfH2H(r, p, page.Signed); err != nil {
		return err
	}
	now := s.engine.Now()
	body := listBody{Data: make([]any, len(page.Data)), HasMore: page.HasMore}
	for i, d := range page.Data {
		body.Data[i] = engine.DepositView(d, now, s.links)
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

// listWithdrawals serves GET /v1/withdraws (bearer, as GET
// /v1/withdraws/{id}: the engine signs no page of withdrawals).
func (s *server) listWithdrawals(w http.ResponseWriter, r *http.Request) error {
	p, err := s.admit(w, r, classDefault)
	if err != nil {
		return err
	}
	lp, err := parseList(r, p.OrganizationID, resourceParams)
	if err != nil {
		return err
	}
	page, err := s.engine.ListWithdrawals(r.Context(), lp)
	if err != nil {
		return err
	}
	if err := s.signIfH2H(r, p, page.Signed); err != nil {
		return err
	}
	body := listBody{Data: make([]any, len(page.Data)), HasMore: page.HasMore}
	for i, wd := range page.Data {
		body.Data[i] = engine.NewWithdrawalView(wd)
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

// listEvents serves GET /v1/events: the bodies the webhooks carried, so a
// receiver that was down catches up from its last event.
func (s *server) listEvents(w http.ResponseWriter, r *http.Request) error {
	p, err := s.admit(w, r, classDefault)
	if err != nil {
		return err
	}
	lp, err := parseList(r, p.OrganizationID, eventParams)
	if err != nil {
		return err
	}
	page, err := s.engine.ListEventsPage(r.Context(), lp)
	if err != nil {
		return err
	}
	if err := s.signIfH2H(r, p, page.Signed); err != nil {
		return err
	}
	body := listBody{Data: make([]any, len(page.Data)), HasMore: page.HasMore}
	for i, ev := range page.Data {
		body.Data[i] = json.RawMessage(ev.Payload)
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

// getEvent serves GET /v1/events/{id}: the webhook body, byte for byte.
// Another organization's event is not found before any signature is
// looked at, as for a deposit.
func (s *server) getEvent(w http.ResponseWriter, r *http.Request) error {
	p, err := s.admit(w, r, classDefault)
	if err != nil {
		return err
	}
	id, err := pathID(r, "event")
	if err != nil {
		return err
	}
	ev, err := s.engine.GetOrgEvent(r.Context(), p.OrganizationID, id)
	if err != nil {
		return err
	}
	h2h, err := s.engine.OrganizationTakesH2H(r.Context(), p.OrganizationID)
	if err != nil {
		return err
	}
	shows := h2h || engine.EventShowsH2H(ev)
	if !shows && strings.HasPrefix(ev.ResourceID, engine.PrefixRefund) {
		// A refund's event shows no checkout_mode: its refund's deposit says.
		if rf, err := s.engine.GetRefund(r.Context(), p.OrganizationID, ev.ResourceID); err == nil {
			shows = rf.DepositH2H
		} else if engine.ErrorCode(err) != engine.CodeNotFound {
			return err
		}
	}
	if err := s.signIfH2H(r, p, shows); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(ev.Payload, '\n'))
	return nil
}

// listBalanceTransactions serves GET /v1/balance/transactions: the
// movements of the available and held balances. Each names its deposit and
// the deposit's amount, so an organization that takes H2H signs it.
func (s *server) listBalanceTransactions(w http.ResponseWriter, r *http.Request) error {
	p, err := s.admit(w, r, classDefault)
	if err != nil {
		return err
	}
	lp, err := parseList(r, p.OrganizationID, balanceParams)
	if err != nil {
		return err
	}
	page, err := s.engine.ListBalanceTransactions(r.Context(), lp)
	if err != nil {
		return err
	}
	if err := s.signIfH2H(r, p, page.Signed); err != nil {
		return err
	}
	body := listBody{Data: make([]any, len(page.Data)), HasMore: page.HasMore}
	for i, bt := range page.Data {
		body.Data[i] = engine.NewBalanceTransactionView(bt)
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}
