package console

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
)

// Logging in and out, and the setup link.

type loginData struct {
	Email, Next, Error string
}

func (s *server) loginPage(w http.ResponseWriter, r *http.Request, q *request) error {
	if q.operator != nil {
		http.Redirect(w, r, s.mount+"/console/", http.StatusSeeOther)
		return nil
	}
	return s.render(w, r, q, http.StatusOK, "login", "", loginData{Next: safeNext(r.URL.Query().Get("next"))})
}

// safeNext keeps a return path only if it is a console page.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/console/") || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") {
		return "/console/"
	}
	return next
}

func (s *server) login(w http.ResponseWriter, r *http.Request, q *request) error {
	f := r.PostForm
	data := loginData{Email: f.Get("email"), Next: safeNext(f.Get("next"))}
	refuse := func(status int, key string) error {
		data.Error = translate(q.lang, key)
		return s.render(w, r, q, status, "login", "", data)
	}
	// Throttled per client network, then per account (from many networks
	// at once), before anything costs a hash.
	now := time.Now()
	if !s.clientThrottle.allow(clientNet(r), now) {
		return refuse(http.StatusTooManyRequests, "login_throttled")
	}
	email, err := engine.NormalizeEmail(data.Email)
	if err != nil {
		return refuse(http.StatusUnauthorized, "login_refused") // no account has it: nothing to hash
	}
	if !s.accountThrottle.allow(email, now) {
		return refuse(http.StatusTooManyRequests, "login_throttled")
	}
	op, err := s.eng.OperatorForLogin(r.Context(), email)
	if err != nil && !errors.Is(err, engine.ErrLoginRefused) {
		return err
	}
	admitted, ok := s.checkLogin(r.Context(), op, f.Get("password"))
	if !admitted {
		w.Header().Set("Retry-After", "5")
		return refuse(http.StatusServiceUnavailable, "login_busy")
	}
	if op == nil {
		return refuse(http.StatusUnauthorized, "login_refused")
	}
	var step int64
	if ok && len(op.TOTPSecret) > 0 {
		secret, err := s.eng.OperatorTOTPSecret(op)
		if err != nil {
			return err
		}
		step, ok = checkTOTP(secret, f.Get("code"), s.now())
	}
	ctx := engine.WithActor(r.Context(), "console:"+op.Email)
	if !ok {
		if err := s.eng.RecordLoginFailure(ctx, op.ID); err != nil {
			return err
		}
		return refuse(http.StatusUnauthorized, "login_refused")
	}
	// A new session every login: a token planted before it (fixation) or
	// the browser's previous session ends here.
	_, token, err := s.eng.StartOperatorSession(ctx, engine.StartSessionParams{OperatorID: op.ID, TOTPStep: step, ReplacesToken: q.token})
	if errors.Is(err, engine.ErrLoginRefused) {
		return refuse(http.StatusUnauthorized, "login_refused")
	}
	if err != nil {
		return err
	}
	if c, err := r.Cookie(sessionCookie); err == nil && c.Value != q.token {
		_ = s.eng.EndOperatorSession(ctx, c.Value)
	}
	s.setCookie(w, r, sessionCookie, token, engine.SessionAbsoluteTimeout)
	s.clearCookie(w, r, loginCookie)
	http.Redirect(w, r, s.mount+data.Next, http.StatusSeeOther)
	return nil
}

// checkLogin checks password against op's (against a dummy hash, as long
// as a real check, when op is nil) within a slot of passwordGate; admitted
// is false, and nothing hashed, when none is free.
func (s *server) checkLogin(ctx context.Context, op *engine.Operator, password string) (admitted, ok bool) {
	leave, admitted := passwordGate.enter(ctx)
	if !admitted {
		return false, false
	}
	defer leave()
	if op == nil {
		checkPassword(s.dummyHash(), password)
		return true, false
	}
	return true, checkPassword(op.PasswordHash, password)
}

func (s *server) logout(w http.ResponseWriter, r *http.Request, q *request) error {
	if err := s.eng.EndOperatorSession(q.ctx(r), q.token); err != nil {
		return err
	}
	s.clearCookie(w, r, sessionCookie)
	http.Redirect(w, r, s.mount+"/console/login?done=logged_out", http.StatusSeeOther)
	return nil
}

type setupData struct {
	Email, Token, Secret, OTPAuth, Error string
}

func (s *server) setupPage(w http.ResponseWriter, r *http.Request, q *request) error {
	token := r.URL.Query().Get("token")
	op, err := s.eng.OperatorBySetupToken(r.Context(), token)
	if err != nil {
		return err
	}
	_, secret := newTOTPSecret()
	return s.render(w, r, q, http.StatusOK, "setup", "", setupData{Email: op.Email, Token: token, Secret: secret, OTPAuth: otpauthURI(op.Email, secret)})
}

func otpauthURI(email, secret string) string {
	return "otpauth://totp/payd:" + url.PathEscape(email) + "?secret=" + secret + "&issuer=payd&digits=6&period=30"
}

func (s *server) setup(w http.ResponseWriter, r *http.Request, q *request) error {
	f := r.PostForm
	token := f.Get("token")
	op, err := s.eng.OperatorBySetupToken(r.Context(), token)
	if err != nil {
		return err
	}
	data := setupData{Email: op.Email, Token: token, Secret: f.Get("totp_secret")}
	data.OTPAuth = otpauthURI(op.Email, data.Secret)
	fail := func(key string) error {
		data.Error = translate(q.lang, key)
		return s.render(w, r, q, http.StatusBadRequest, "setup", "", data)
	}
	if err := checkNewPassword(f.Get("password"), f.Get("confirm")); err != nil {
		return fail(err.Error())
	}
	p := engine.CompleteSetupParams{Token: token}
	if code := strings.TrimSpace(f.Get("code")); code != "" {
		secret, err := parseTOTPSecret(data.Secret)
		if err != nil {
			return fail("totp_wrong")
		}
		step, ok := checkTOTP(secret, code, s.now())
		if !ok {
			return fail("totp_wrong")
		}
		p.TOTPSecret, p.TOTPStep = secret, step
	}
	leave, admitted := passwordGate.enter(r.Context())
	if !admitted {
		w.Header().Set("Retry-After", "5")
		data.Error = translate(q.lang, "login_busy")
		return s.render(w, r, q, http.StatusServiceUnavailable, "setup", "", data)
	}
	p.PasswordHash = hashPassword(f.Get("password"), defaultArgon)
	leave() // hashPassword does not fail
	if _, err := s.eng.CompleteOperatorSetup(engine.WithActor(r.Context(), "console:"+op.Email), p); err != nil {
		return err
	}
	http.Redirect(w, r, s.mount+"/console/login?done=setup_done", http.StatusSeeOther)
	return nil
}

// The overview.

type overviewData struct {
	Balance        *engine.Balance
	Deposits       []statusCount
	Withdrawals    []statusCount
	Queues         *engine.Queues
	PayoutsWaiting int
	HeldSMS        int
	SilentDevices  []Device
	// EndpointsFailing are webhook endpoints failing now or disabled.
	EndpointsFailing int
	// NewOrgName and Errors are a refused new organization's form.
	NewOrgName string
	Errors     map[string]string
}

type statusCount struct {
	Status string
	Count  int
}

func sortedCounts(m map[string]int) []statusCount {
	out := make([]statusCount, 0, len(m))
	for k, v := range m {
		out = append(out, statusCount{k, v})
	}
	slices.SortFunc(out, func(a, b statusCount) int { return strings.Compare(a.Status, b.Status) })
	return out
}

// startOfDay is midnight in Dhaka of the day of now.
func startOfDay(now time.Time) time.Time {
	d := now.In(engine.Dhaka)
	return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, engine.Dhaka).UTC()
}

func (s *server) overview(w http.ResponseWriter, r *http.Request, q *request) error {
	ctx := r.Context()
	var data overviewData
	if q.org == "" {
		return s.render(w, r, q, http.StatusOK, "overview", "overview", data)
	}
	var err error
	if data.Balance, err = s.eng.GetBalance(ctx, q.org); err != nil {
		return err
	}
	counts, err := s.eng.CountSince(ctx, q.org, startOfDay(s.eng.Now()))
	if err != nil {
		return err
	}
	data.Deposits, data.Withdrawals = sortedCounts(counts.Deposits), sortedCounts(counts.Withdrawals)
	eps, err := s.eng.ListWebhookEndpoints(ctx, q.org)
	if err != nil {
		return err
	}
	for _, ep := range eps {
		if !ep.Enabled || !ep.FailingSince.IsZero() {
			data.EndpointsFailing++
		}
	}
	if q.operator.Platform() {
		// Queue depths are everyone's: a platform operator's alone.
		if data.Queues, err = s.eng.Queues(ctx); err != nil {
			return err
		}
	}
	if s.inbox != nil {
		ps, err := s.inbox.ListPayouts(ctx, q.org, true)
		if err != nil {
			return err
		}
		data.PayoutsWaiting = len(ps)
		for _, status := range []string{"held", "conflict"} {
			ms, err := s.inbox.ListSMS(ctx, q.org, status, MaxListed)
			if err != nil {
				return err
			}
			data.HeldSMS += len(ms)
		}
		ds, err := s.inbox.ListDevices(ctx, q.org)
		if err != nil {
			return err
		}
		for _, d := range ds {
			if d.Silent && !d.Revoked {
				data.SilentDevices = append(data.SilentDevices, d)
			}
		}
	}
	return s.render(w, r, q, http.StatusOK, "overview", "overview", data)
}

// MaxListed bounds the rows of a console list.
const MaxListed = 100

// Deposits.

type depositsData struct {
	Form     url.Values
	Error    string
	Deposits []*engine.Deposit
	Searched bool
}

var depositStatuses = []string{engine.StatusPending, engine.StatusProcessing, engine.StatusSucceeded, engine.StatusFailed,
	engine.StatusCancelled, engine.StatusExpired, engine.StatusRejected, engine.StatusRefunded}

// parseDay reads a YYYY-MM-DD date as the start of that day in Dhaka.
func parseDay(field, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.ParseInLocation("2006-01-02", s, engine.Dhaka)
	if err != nil {
		return time.Time{}, engine.Invalid(field, "must be a date, YYYY-MM-DD")
	}
	return t.UTC(), nil
}

func (s *server) deposits(w http.ResponseWriter, r *http.Request, q *request) error {
	f := r.URL.Query()
	data := depositsData{Form: f}
	p := engine.SearchDepositsParams{OrganizationID: q.org, MerchantID: strings.TrimSpace(f.Get("merchant_id")),
		TransactionID: strings.TrimSpace(f.Get("transaction_id")), PayerPhone: strings.TrimSpace(f.Get("phone")), Limit: MaxListed}
	if st := f.Get("status"); slices.Contains(depositStatuses, st) {
		p.Status = st
	}
	var err error
	if p.From, err = parseDay("from", f.Get("from")); err == nil {
		if p.To, err = parseDay("to", f.Get("to")); err == nil && !p.To.IsZero() {
			p.To = p.To.Add(24 * time.Hour) // the whole of the last day
		}
	}
	status := http.StatusOK
	if err == nil && q.org != "" {
		data.Searched = true
		data.Deposits, err = s.eng.SearchDeposits(r.Context(), p)
	}
	var e *engine.Error
	if errors.As(err, &e) && e.Code == engine.CodeInvalidRequest {
		data.Error, status, err = e.Message, http.StatusBadRequest, nil
	}
	if err != nil {
		return err
	}
	return s.render(w, r, q, status, "deposits", "deposits", data)
}

type depositData struct {
	Deposit  *engine.Deposit
	Attempts []*engine.Attempt
	Events   []eventDeliveries
	// Refunds are the deposit's (newest first, at most MaxListed);
	// Refundable what its refunds have not reserved, "" unless it can be
	// refunded.
	Refunds    []*engine.Refund
	Refundable string
	// Fee is the deposit fee at the organization's rates, and Net what
	// the organization is credited: the ledger's own computation.
	Fee, Net decimal.Decimal
}

type eventDeliveries struct {
	Event      *engine.Event
	Deliveries []engine.DeliveryWithAttempts
}

func (s *server) deposit(w http.ResponseWriter, r *http.Request, q *request) error {
	ctx := r.Context()
	d, err := s.eng.GetDeposit(ctx, q.org, r.PathValue("id"))
	if err != nil {
		return err
	}
	data := depositData{Deposit: d}
	org, err := s.eng.GetOrganization(ctx, q.org)
	if err != nil {
		return err
	}
	data.Fee = org.DepositFeeOf(d.PaymentMethod, d.Amount)
	data.Net = d.Amount.Sub(data.Fee)
	if data.Attempts, err = s.eng.ListAttempts(ctx, q.org, d.ID); err != nil {
		return err
	}
	evs, err := s.eng.ListResourceEvents(ctx, q.org, d.ID)
	if err != nil {
		return err
	}
	for _, ev := range evs {
		ds, err := s.eng.ListEventDeliveriesOf(ctx, q.org, ev.ID)
		if err != nil {
			return err
		}
		data.Events = append(data.Events, eventDeliveries{ev, ds})
	}
	refunds, err := s.eng.ListRefunds(ctx, engine.ListParams{OrganizationID: q.org, DepositID: d.ID, Limit: MaxListed})
	if err != nil {
		return err
	}
	data.Refunds = refunds.Data
	if left := d.Amount.Sub(d.RefundReserved); d.Status == engine.StatusSucceeded && left.IsPositive() {
		data.Refundable = engine.FormatAmount(left)
	}
	return s.render(w, r, q, http.StatusOK, "deposit", "deposits", data)
}

// Refunds. An operator reviews a refund (refundReview changes nothing and
// shows what will be sent, with a merchant_id generated for it), then
// confirms it (refundCreate): the merchant_id makes a confirmation posted
// twice one refund.

type refundData struct {
	Deposit                    *engine.Deposit
	Amount, Reason, MerchantID string
}

// refundParams reads a refund form of the deposit d: an empty amount is
// all that is left to refund.
func refundParams(r *http.Request, q *request, d *engine.Deposit) (engine.CreateRefundParams, error) {
	p := engine.CreateRefundParams{
		OrganizationID: q.org, DepositID: d.ID, AmountGiven: true, Audit: true,
		Amount: strings.TrimSpace(r.PostForm.Get("amount")), Reason: strings.TrimSpace(r.PostForm.Get("reason")),
		MerchantID: r.PostForm.Get("merchant_id"),
	}
	if p.Amount == "" {
		p.Amount = engine.FormatAmount(d.Amount.Sub(d.RefundReserved))
	}
	return p, p.Validate()
}

func (s *server) refundReview(w http.ResponseWriter, r *http.Request, q *request) error {
	d, err := s.eng.GetDeposit(r.Context(), q.org, r.PathValue("id"))
	if err != nil {
		return err
	}
	r.PostForm.Set("merchant_id", "console_"+engine.RandomToken(12))
	p, err := refundParams(r, q, d)
	if err != nil {
		return err
	}
	// The checks the create repeats under its locks, said before the
	// operator confirms.
	if d.Status != engine.StatusSucceeded {
		return engine.Errorf(engine.CodeDepositNotRefundable, "deposit: its status is %s; only a succeeded deposit can be refunded", d.Status)
	}
	amount, _ := engine.ParseAmount("amount", p.Amount) // Validate parsed it
	if left := d.Amount.Sub(d.RefundReserved); amount.GreaterThan(left) {
		return engine.Errorf(engine.CodeRefundExceedsDeposit, "amount: the deposit has %s left to refund", engine.FormatAmount(left))
	}
	data := refundData{Deposit: d, Amount: engine.FormatAmount(amount), Reason: p.Reason, MerchantID: p.MerchantID}
	return s.render(w, r, q, http.StatusOK, "refund", "deposits", data)
}

func (s *server) refundCreate(w http.ResponseWriter, r *http.Request, q *request) error {
	d, err := s.eng.GetDeposit(r.Context(), q.org, r.PathValue("id"))
	if err != nil {
		return err
	}
	p, err := refundParams(r, q, d)
	if err != nil {
		return err
	}
	if _, _, err := s.eng.CreateRefund(q.ctx(r), p); err != nil {
		return err
	}
	return done(w, r, q, "/console/deposits/"+url.PathEscape(d.ID), "done_refund")
}

// Withdrawals and the manual payout queue.

type withdrawalsData struct {
	Form        url.Values
	Withdrawals []*engine.Withdrawal
	Payouts     []Payout
}

func (s *server) withdrawals(w http.ResponseWriter, r *http.Request, q *request) error {
	f := r.URL.Query()
	data := withdrawalsData{Form: f}
	if q.org != "" {
		p := engine.SearchWithdrawalsParams{OrganizationID: q.org, MerchantID: strings.TrimSpace(f.Get("merchant_id")), Limit: MaxListed}
		if st := f.Get("status"); st == engine.WithdrawalProcessing || st == engine.WithdrawalSucceeded || st == engine.WithdrawalFailed {
			p.Status = st
		}
		var err error
		if data.Withdrawals, err = s.eng.SearchWithdrawals(r.Context(), p); err != nil {
			return err
		}
		if s.inbox != nil {
			if data.Payouts, err = s.inbox.ListPayouts(r.Context(), q.org, true); err != nil {
				return err
			}
		}
	}
	return s.render(w, r, q, http.StatusOK, "withdrawals", "withdrawals", data)
}

// needInbox refuses an SMS inbox action when payd runs another provider.
func (s *server) needInbox() error {
	if s.inbox == nil {
		return errNotFound
	}
	return nil
}

func (s *server) payoutComplete(w http.ResponseWriter, r *http.Request, q *request) error {
	if err := s.needInbox(); err != nil {
		return err
	}
	if err := s.inbox.CompletePayout(q.ctx(r), q.org, r.PathValue("id"), r.PostForm.Get("transaction_id")); err != nil {
		return err
	}
	return done(w, r, q, "/console/withdrawals", "done_payout_complete")
}

func (s *server) payoutConfirm(w http.ResponseWriter, r *http.Request, q *request) error {
	if err := s.needInbox(); err != nil {
		return err
	}
	if err := s.inbox.ConfirmPayout(q.ctx(r), q.org, r.PathValue("id")); err != nil {
		return err
	}
	return done(w, r, q, "/console/withdrawals", "done_payout_complete")
}

func (s *server) payoutFail(w http.ResponseWriter, r *http.Request, q *request) error {
	if err := s.needInbox(); err != nil {
		return err
	}
	if err := s.inbox.FailPayout(q.ctx(r), q.org, r.PathValue("id"), r.PostForm.Get("reason")); err != nil {
		return err
	}
	return done(w, r, q, "/console/withdrawals", "done_payout_fail")
}

// The SMS inbox.

type smsData struct {
	Status    string
	Statuses  []string
	Messages  []SMS
	Unmatched []Unmatched
	Wallets   []*engine.Wallet
	// Chains are the wallets' chains with their balances, for whoever
	// anchors them (nil for anyone else).
	Chains []DeviceWallet
}

var smsStatuses = []string{"held", "conflict", "accepted", "duplicate", "expired", "unparsed", "untrusted_sender", "no_wallet"}

func (s *server) sms(w http.ResponseWriter, r *http.Request, q *request) error {
	if err := s.needInbox(); err != nil {
		return err
	}
	ctx := r.Context()
	data := smsData{Statuses: smsStatuses}
	if st := r.URL.Query().Get("status"); slices.Contains(smsStatuses, st) {
		data.Status = st
	}
	if q.org != "" {
		var err error
		if data.Messages, err = s.inbox.ListSMS(ctx, q.org, data.Status, MaxListed); err != nil {
			return err
		}
		if data.Unmatched, err = s.inbox.ListUnmatched(ctx, q.org); err != nil {
			return err
		}
		if data.Wallets, err = s.eng.ListWallets(ctx, q.org); err != nil {
			return err
		}
		if seesChain(q.operator) {
			if data.Chains, err = s.chains(ctx, q.org); err != nil {
				return err
			}
		} else {
			for i := range data.Messages {
				data.Messages[i] = hideBalances(data.Messages[i])
			}
		}
	}
	return s.render(w, r, q, http.StatusOK, "sms", "sms", data)
}

func (s *server) smsApprove(w http.ResponseWriter, r *http.Request, q *request) error {
	if err := s.needInbox(); err != nil {
		return err
	}
	if err := s.inbox.ApproveSMS(q.ctx(r), q.org, r.PathValue("id"), r.PostForm.Get("reason")); err != nil {
		return err
	}
	return done(w, r, q, "/console/sms", "done_sms_approve")
}

func (s *server) smsReject(w http.ResponseWriter, r *http.Request, q *request) error {
	if err := s.needInbox(); err != nil {
		return err
	}
	if err := s.inbox.RejectSMS(q.ctx(r), q.org, r.PathValue("id"), r.PostForm.Get("reason")); err != nil {
		return err
	}
	return done(w, r, q, "/console/sms", "done_sms_reject")
}

func (s *server) smsPaste(w http.ResponseWriter, r *http.Request, q *request) error {
	if err := s.needInbox(); err != nil {
		return err
	}
	f := r.PostForm
	p := PasteSMS{OrganizationID: q.org, WalletID: f.Get("wallet"), Sender: strings.TrimSpace(f.Get("sender")), Text: f.Get("text"), ReceivedAt: s.eng.Now()}
	if at := strings.TrimSpace(f.Get("received_at")); at != "" {
		t, err := time.ParseInLocation("2006-01-02T15:04", at, engine.Dhaka)
		if err != nil {
			return engine.Invalid("received_at", "must be a date and time")
		}
		p.ReceivedAt = t.UTC()
	}
	ws, err := s.eng.ListWallets(r.Context(), q.org)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(ws, func(w *engine.Wallet) bool { return w.ID == p.WalletID }) {
		return engine.Errorf(engine.CodeNotFound, "wallet not found")
	}
	if err := s.inbox.PasteSMS(q.ctx(r), p); err != nil {
		return err
	}
	return done(w, r, q, "/console/sms", "done_sms_paste")
}

func (s *server) smsAnchor(w http.ResponseWriter, r *http.Request, q *request) error {
	if err := s.needInbox(); err != nil {
		return err
	}
	balance, err := decimal.NewFromString(strings.TrimSpace(r.PostForm.Get("balance")))
	if err != nil {
		return engine.Invalid("balance", "must be an amount, e.g. 12500.00")
	}
	if _, err := s.inbox.Anchor(q.ctx(r), q.org, r.PostForm.Get("wallet"), balance); err != nil {
		return err
	}
	return done(w, r, q, "/console/sms", "done_sms_anchor")
}

func (s *server) smsCredit(w http.ResponseWriter, r *http.Request, q *request) error {
	if err := s.needInbox(); err != nil {
		return err
	}
	f := r.PostForm
	if err := s.inbox.CreditLatePayment(q.ctx(r), q.org, f.Get("deposit"), f.Get("transaction_id")); err != nil {
		return err
	}
	return done(w, r, q, "/console/sms", "done_credit")
}

// Devices.

type devicesData struct {
	Devices []Device
	// Token is a rotated device's new token, shown once.
	Token, TokenDevice string
	// Paired is a phone just paired, with what its forwarder app needs
	// (shown once, and as a QR code): Pairing is the code's content.
	Paired       *NewDevice
	ForwarderURL string
	Pairing      string
	Wallets      []*engine.Wallet
	Form         url.Values
	Errors       map[string]string
}

func (s *server) devices(w http.ResponseWriter, r *http.Request, q *request) error {
	return s.renderDevices(w, r, q, devicesData{})
}

func (s *server) renderDevices(w http.ResponseWriter, r *http.Request, q *request, data devicesData) error {
	return s.renderDevicesStatus(w, r, q, http.StatusOK, data)
}

func (s *server) renderDevicesStatus(w http.ResponseWriter, r *http.Request, q *request, status int, data devicesData) error {
	if err := s.needInbox(); err != nil {
		return err
	}
	if q.org != "" {
		var err error
		if data.Devices, err = s.inbox.ListDevices(r.Context(), q.org); err != nil {
			return err
		}
		if data.Wallets, err = s.eng.ListWallets(r.Context(), q.org); err != nil {
			return err
		}
	}
	data.ForwarderURL = s.publicAt(s.apiPrefix + "/v1/devices/sms")
	// The page says whether a chain is anchored, never its balance: that
	// is shown only where it is anchored.
	for _, d := range data.Devices {
		for i := range d.Wallets {
			if d.Wallets[i].Balance != "" {
				d.Wallets[i].Balance = hidden
			}
		}
	}
	return s.render(w, r, q, status, "devices", "devices", data)
}

// deviceAdd pairs a phone: its token (and signing secret) are shown once,
// with a QR code of the forwarder URL and token for its app. A device
// token is a credential: the owner's.
func (s *server) deviceAdd(w http.ResponseWriter, r *http.Request, q *request) error {
	if err := s.needInbox(); err != nil {
		return err
	}
	if q.org == "" {
		return errNotFound
	}
	f := r.PostForm
	nd, err := s.inbox.AddDevice(q.ctx(r), AddDevice{OrganizationID: q.org, Name: strings.TrimSpace(f.Get("name")),
		WalletIDs: f["wallet"], SigningSecret: f.Get("signing_secret") == "on"})
	if field, msg, ok := fieldError(q.lang, err); ok {
		return s.renderDevicesStatus(w, r, q, http.StatusBadRequest, devicesData{Form: f, Errors: map[string]string{field: msg}})
	}
	if err != nil {
		return err
	}
	data := devicesData{Paired: nd}
	data.Pairing = pairingPayload(s.publicAt(s.apiPrefix+"/v1/devices/sms"), nd)
	return s.renderDevices(w, r, q, data)
}

func (s *server) deviceRevoke(w http.ResponseWriter, r *http.Request, q *request) error {
	if err := s.needInbox(); err != nil {
		return err
	}
	if err := s.inbox.RevokeDevice(q.ctx(r), q.org, r.PathValue("id")); err != nil {
		return err
	}
	return done(w, r, q, "/console/devices", "done_device_revoke")
}

func (s *server) deviceRotate(w http.ResponseWriter, r *http.Request, q *request) error {
	if err := s.needInbox(); err != nil {
		return err
	}
	token, err := s.inbox.RotateDevice(q.ctx(r), q.org, r.PathValue("id"))
	if err != nil {
		return err
	}
	return s.renderDevices(w, r, q, devicesData{Token: token, TokenDevice: r.PathValue("id")})
}

// pairingPayload is what a paired phone's QR code holds: the forwarder
// URL and its credentials, as JSON a forwarder app (or a person) reads.
func pairingPayload(forwarderURL string, nd *NewDevice) string {
	b, _ := json.Marshal(struct {
		URL           string `json:"url"`
		Token         string `json:"token"`
		SigningSecret string `json:"signing_secret,omitempty"`
	}{forwarderURL, nd.Token, nd.SigningSecret})
	return string(b)
}

// Wallets.

type walletsData struct {
	Wallets              []*engine.Wallet
	Channels, Operations []string
	Form                 url.Values
	Errors               map[string]string
}

func (s *server) wallets(w http.ResponseWriter, r *http.Request, q *request) error {
	return s.renderWallets(w, r, q, http.StatusOK, walletsData{})
}

func (s *server) renderWallets(w http.ResponseWriter, r *http.Request, q *request, status int, data walletsData) error {
	data.Channels, data.Operations = engine.WalletChannels(), engine.WalletOperations()
	if q.org != "" {
		var err error
		if data.Wallets, err = s.eng.ListWallets(r.Context(), q.org); err != nil {
			return err
		}
	}
	return s.render(w, r, q, status, "wallets", "wallets", data)
}

// walletAdd adds a receiving wallet to the organization's pool.
func (s *server) walletAdd(w http.ResponseWriter, r *http.Request, q *request) error {
	if q.org == "" {
		return errNotFound
	}
	f := r.PostForm
	_, err := s.eng.AddWallet(q.ctx(r), engine.AddWalletParams{OrganizationID: q.org, Channel: f.Get("channel"), Operation: f.Get("operation"),
		Phone: strings.TrimSpace(f.Get("phone")), Name: strings.TrimSpace(f.Get("name")), QRPayload: strings.TrimSpace(f.Get("qr_payload")),
		MinAmount: strings.TrimSpace(f.Get("min_amount")), MaxAmount: strings.TrimSpace(f.Get("max_amount")), DailyLimit: strings.TrimSpace(f.Get("daily_limit"))})
	if field, msg, ok := fieldError(q.lang, err); ok {
		return s.renderWallets(w, r, q, http.StatusBadRequest, walletsData{Form: f, Errors: map[string]string{field: msg}})
	}
	if err != nil {
		return err
	}
	return done(w, r, q, "/console/wallets", "done_wallet_add")
}

func (s *server) walletEnable(w http.ResponseWriter, r *http.Request, q *request) error {
	return s.setWalletEnabled(w, r, q, true)
}

func (s *server) walletDisable(w http.ResponseWriter, r *http.Request, q *request) error {
	return s.setWalletEnabled(w, r, q, false)
}

func (s *server) setWalletEnabled(w http.ResponseWriter, r *http.Request, q *request, enabled bool) error {
	if _, err := s.eng.SetWalletEnabled(q.ctx(r), q.org, r.PathValue("id"), enabled); err != nil {
		return err
	}
	what := "done_wallet_disable"
	if enabled {
		what = "done_wallet_enable"
	}
	return done(w, r, q, "/console/wallets", what)
}

func (s *server) walletLimits(w http.ResponseWriter, r *http.Request, q *request) error {
	f := r.PostForm
	_, err := s.eng.SetWalletLimits(q.ctx(r), q.org, r.PathValue("id"), engine.WalletLimits{
		MinAmount: f.Get("min_amount"), MaxAmount: f.Get("max_amount"), DailyLimit: f.Get("daily_limit")})
	if err != nil {
		return err
	}
	return done(w, r, q, "/console/wallets", "done_wallet_limits")
}

// Webhooks.

type webhooksData struct {
	Endpoints []*engine.WebhookEndpoint
	Events    []engine.EventDeliveries
	// Secret is a new endpoint's signing secret, shown once; Form and
	// Errors keep a refused one's URL and say why beside it.
	Secret, SecretEndpoint string
	Form                   url.Values
	Errors                 map[string]string
	// Tested is the endpoint just sent a test post, and what it answered.
	Tested, TestError string
	TestStatus        int
	// IPNs are the organization's UddoktaPay-compatible IPNs, newest
	// first: the other notifications payd posts for it.
	IPNs []*engine.CompatIPN
}

func (s *server) webhooks(w http.ResponseWriter, r *http.Request, q *request) error {
	return s.renderWebhooks(w, r, q, http.StatusOK, webhooksData{})
}

// webhookAdd adds an endpoint; its secret is shown once. A secret is a
// credential: the owner's.
func (s *server) webhookAdd(w http.ResponseWriter, r *http.Request, q *request) error {
	if q.org == "" {
		return errNotFound
	}
	ep, secret, err := s.eng.AddWebhookEndpoint(q.ctx(r), q.org, strings.TrimSpace(r.PostForm.Get("url")))
	if field, msg, ok := fieldError(q.lang, err); ok {
		return s.renderWebhooks(w, r, q, http.StatusBadRequest, webhooksData{Form: r.PostForm, Errors: map[string]string{field: msg}})
	}
	if err != nil {
		return err
	}
	return s.renderWebhooks(w, r, q, http.StatusOK, webhooksData{Secret: secret, SecretEndpoint: ep.ID})
}

// orgEndpoint returns the organization's endpoint id, or not_found.
func (s *server) orgEndpoint(r *http.Request, q *request, id string) (*engine.WebhookEndpoint, error) {
	eps, err := s.eng.ListWebhookEndpoints(r.Context(), q.org)
	if err != nil {
		return nil, err
	}
	for _, ep := range eps {
		if ep.ID == id {
			return ep, nil
		}
	}
	return nil, errNotFound
}

// webhookTest posts a signed test event to an endpoint now and shows what
// it answered.
func (s *server) webhookTest(w http.ResponseWriter, r *http.Request, q *request) error {
	res, err := s.eng.TestWebhookEndpoint(q.ctx(r), q.org, r.PathValue("id"))
	if err != nil {
		return err
	}
	data := webhooksData{Tested: r.PathValue("id"), TestStatus: res.StatusCode}
	if res.Err != nil {
		data.TestError = res.Err.Error()
	}
	return s.renderWebhooks(w, r, q, http.StatusOK, data)
}

func (s *server) webhookEnable(w http.ResponseWriter, r *http.Request, q *request) error {
	ep, err := s.orgEndpoint(r, q, r.PathValue("id"))
	if err != nil {
		return err
	}
	if _, err := s.eng.EnableWebhookEndpoint(q.ctx(r), ep.ID); err != nil {
		return err
	}
	return done(w, r, q, "/console/webhooks", "done_webhook_enable")
}

func (s *server) webhookRemove(w http.ResponseWriter, r *http.Request, q *request) error {
	ep, err := s.orgEndpoint(r, q, r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := s.eng.RemoveWebhookEndpoint(q.ctx(r), ep.ID); err != nil {
		return err
	}
	return done(w, r, q, "/console/webhooks", "done_webhook_remove")
}

func (s *server) renderWebhooks(w http.ResponseWriter, r *http.Request, q *request, status int, data webhooksData) error {
	if q.org != "" {
		var err error
		if data.Endpoints, err = s.eng.ListWebhookEndpoints(r.Context(), q.org); err != nil {
			return err
		}
		if data.Events, err = s.eng.ListEventDeliveries(r.Context(), q.org, 50); err != nil {
			return err
		}
		slices.Reverse(data.Events)
		if data.IPNs, err = s.eng.ListCompatIPNs(r.Context(), q.org, 50); err != nil {
			return err
		}
	}
	return s.render(w, r, q, status, "webhooks", "webhooks", data)
}

// ipnRedeliver queues a finished UddoktaPay IPN again (the engine audits
// it); another organization's is not_found.
func (s *server) ipnRedeliver(w http.ResponseWriter, r *http.Request, q *request) error {
	if err := s.eng.RedeliverCompatIPN(q.ctx(r), q.org, r.PathValue("link")); err != nil {
		return err
	}
	return done(w, r, q, "/console/webhooks", "done_ipn_redeliver")
}

func (s *server) redeliver(w http.ResponseWriter, r *http.Request, q *request) error {
	ev, err := s.eng.GetEvent(r.Context(), q.org, r.PathValue("id"))
	if err != nil {
		return err
	}
	if _, err := s.eng.Redeliver(q.ctx(r), ev.ID, ""); err != nil {
		return err
	}
	back := "/console/webhooks"
	if strings.HasPrefix(ev.ResourceID, engine.PrefixDeposit) && r.PostForm.Get("back") == "deposit" {
		back = "/console/deposits/" + url.PathEscape(ev.ResourceID)
	}
	return done(w, r, q, back, "done_redeliver")
}

// API keys.

type keysData struct {
	Keys []*engine.APIKey
	// Credentials are a new key's secrets, shown once; New says the key
	// replaces none.
	Credentials *engine.APIKeyCredentials
	New         bool
	// Secret is a key's new signing secret (the key unchanged), shown once.
	Secret, SecretKey string
	// CompatHint ends the UddoktaPay-compatible key ("" when disabled);
	// CompatKey is a new one, shown once.
	CompatHint, CompatKey string
	// Bkash is the bKash card (nil without the bKash provider).
	Bkash *bkashData
}

func (s *server) keys(w http.ResponseWriter, r *http.Request, q *request) error {
	return s.renderKeys(w, r, q, keysData{})
}

func (s *server) renderKeys(w http.ResponseWriter, r *http.Request, q *request, data keysData) error {
	if q.org != "" {
		var err error
		if data.Keys, err = s.eng.ListAPIKeys(r.Context(), q.org); err != nil {
			return err
		}
		if data.CompatHint, err = s.eng.CompatKeyHint(r.Context(), q.org); err != nil {
			return err
		}
		if s.bkash != nil {
			u, err := s.bkash.BkashConnection(r.Context(), q.org)
			if err != nil {
				return err
			}
			data.Bkash = &bkashData{Connected: u != "", BaseURL: u}
		}
	}
	return s.render(w, r, q, http.StatusOK, "keys", "keys", data)
}

// orgKey returns the organization's API key id, or not_found.
func (s *server) orgKey(r *http.Request, q *request, id string) error {
	keys, err := s.eng.ListAPIKeys(r.Context(), q.org)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if k.ID == id {
			return nil
		}
	}
	return errNotFound
}

func (s *server) keyRotate(w http.ResponseWriter, r *http.Request, q *request) error {
	id := r.PathValue("id")
	if err := s.orgKey(r, q, id); err != nil {
		return err
	}
	c, err := s.eng.RotateAPIKey(q.ctx(r), id, 24*time.Hour)
	if err != nil {
		return err
	}
	return s.renderKeys(w, r, q, keysData{Credentials: c})
}

// keyCreate issues a new API key and signing secret, shown once.
func (s *server) keyCreate(w http.ResponseWriter, r *http.Request, q *request) error {
	if q.org == "" {
		return errNotFound
	}
	c, err := s.eng.CreateAPIKey(q.ctx(r), q.org)
	if err != nil {
		return err
	}
	return s.renderKeys(w, r, q, keysData{Credentials: c, New: true})
}

// keySecret gives a key a new signing secret, shown once; the previous one
// still verifies for a grace period.
func (s *server) keySecret(w http.ResponseWriter, r *http.Request, q *request) error {
	id := r.PathValue("id")
	if err := s.orgKey(r, q, id); err != nil {
		return err
	}
	secret, err := s.eng.RotateSigningSecret(q.ctx(r), id)
	if err != nil {
		return err
	}
	return s.renderKeys(w, r, q, keysData{Secret: secret, SecretKey: id})
}

func (s *server) keyRevoke(w http.ResponseWriter, r *http.Request, q *request) error {
	id := r.PathValue("id")
	if err := s.orgKey(r, q, id); err != nil {
		return err
	}
	if _, err := s.eng.RevokeAPIKey(q.ctx(r), id); err != nil {
		return err
	}
	return done(w, r, q, "/console/keys", "done_key_revoke")
}

// compatEnable issues the organization's UddoktaPay-compatible key
// (replacing any), shown once.
func (s *server) compatEnable(w http.ResponseWriter, r *http.Request, q *request) error {
	if q.org == "" {
		return errNotFound
	}
	key, err := s.eng.EnableCompat(q.ctx(r), q.org)
	if err != nil {
		return err
	}
	return s.renderKeys(w, r, q, keysData{CompatKey: key})
}

func (s *server) compatDisable(w http.ResponseWriter, r *http.Request, q *request) error {
	if q.org == "" {
		return errNotFound
	}
	if err := s.eng.DisableCompat(q.ctx(r), q.org); err != nil {
		return err
	}
	return done(w, r, q, "/console/keys", "done_compat_disable")
}

// The audit log.

func (s *server) audit(w http.ResponseWriter, r *http.Request, q *request) error {
	var es []*engine.AuditEntry
	if q.org != "" {
		var err error
		if es, err = s.eng.ListAudit(r.Context(), q.org, 200); err != nil {
			return err
		}
		slices.Reverse(es)
		if !seesChain(q.operator) {
			for i, e := range es {
				es[i] = hideAuditBalances(e)
			}
		}
	}
	return s.render(w, r, q, http.StatusOK, "audit", "audit", es)
}

// Payment links.

type linksData struct {
	Links   []*engine.PaymentLink
	BaseURL string
	Created *engine.PaymentLink
	// Form is what the operator typed, kept when it is refused, and
	// Errors the refusal beside its field.
	Form   url.Values
	Errors map[string]string
}

func (s *server) links(w http.ResponseWriter, r *http.Request, q *request) error {
	return s.renderLinks(w, r, q, linksData{})
}

func (s *server) renderLinks(w http.ResponseWriter, r *http.Request, q *request, data linksData) error {
	return s.renderLinksStatus(w, r, q, http.StatusOK, data)
}

func (s *server) renderLinksStatus(w http.ResponseWriter, r *http.Request, q *request, status int, data linksData) error {
	data.BaseURL = s.publicAt(PayPath)
	if q.org != "" {
		var err error
		if data.Links, err = s.eng.ListPaymentLinks(r.Context(), q.org, MaxListed); err != nil {
			return err
		}
	}
	return s.render(w, r, q, status, "links", "links", data)
}

func (s *server) linkCreate(w http.ResponseWriter, r *http.Request, q *request) error {
	l, err := s.eng.CreatePaymentLink(q.ctx(r), q.org, strings.TrimSpace(r.PostForm.Get("amount")), r.PostForm.Get("note"))
	if field, msg, ok := fieldError(q.lang, err); ok {
		return s.renderLinksStatus(w, r, q, http.StatusBadRequest, linksData{Form: r.PostForm, Errors: map[string]string{field: msg}})
	}
	if err != nil {
		return err
	}
	return s.renderLinks(w, r, q, linksData{Created: l})
}

// The payer's page of a payment link, and of an invoice of the
// UddoktaPay-compatible checkout (a link with the merchant's return URLs):
// once paid, it sends the payer back to the merchant with invoice_id.

type payData struct {
	State   *engine.PaymentLinkState
	OrgName string
	// Logo and Support are the organization's logo URL and support
	// contact ("" for none).
	Logo, Support string
	Methods       []string
	Error         string
	// Invoice is set when the link is an invoice; Return is where its
	// payer goes back with a form (return_type POST).
	Invoice *engine.CompatInvoice
	Return  string
}

func (s *server) payPage(w http.ResponseWriter, r *http.Request, q *request) error {
	return s.renderPay(w, r, q, http.StatusOK, "")
}

func (s *server) renderPay(w http.ResponseWriter, r *http.Request, q *request, status int, msg string) error {
	token := r.PathValue("token")
	st, err := s.eng.GetPaymentLinkByToken(r.Context(), token)
	if err != nil {
		return err
	}
	inv, err := s.eng.GetCompatInvoiceByLink(r.Context(), st.Link.OrganizationID, st.Link.ID)
	if err != nil {
		return err
	}
	data := payData{State: st, Error: msg, Invoice: inv}
	if data.Methods, err = s.eng.PayableMethods(r.Context(), st.Link.OrganizationID, st.Link.Amount); err != nil {
		return err
	}
	if inv != nil && st.Paid() {
		if inv.ReturnType != engine.CompatReturnPOST {
			http.Redirect(w, r, engine.CompatReturnURL(inv.RedirectURL, token), http.StatusSeeOther)
			return nil
		}
		// A form the payer submits (no script): the page may post to the
		// merchant's origin only.
		data.Return = inv.RedirectURL
		if u, err := url.Parse(inv.RedirectURL); err == nil {
			csp := w.Header().Get("Content-Security-Policy")
			w.Header().Set("Content-Security-Policy", strings.Replace(csp, "form-action 'self'", "form-action 'self' "+u.Scheme+"://"+u.Host, 1))
		}
	}
	org, err := s.eng.GetOrganization(r.Context(), st.Link.OrganizationID)
	if err != nil {
		return err
	}
	data.OrgName, q.shop = org.Name, org.Name
	data.Logo, data.Support = org.LogoURL, org.SupportContact
	allowImage(w, org.LogoURL)
	return s.render(w, r, q, status, "pay", "", data)
}

func (s *server) pay(w http.ResponseWriter, r *http.Request, q *request) error {
	token := r.PathValue("token")
	d, err := s.eng.PayPaymentLink(r.Context(), engine.PayPaymentLinkParams{
		Token: token, PaymentMethod: r.PostForm.Get("method"), ReturnURL: s.publicAt(PayPath + url.PathEscape(token)),
	})
	var e *engine.Error
	if errors.As(err, &e) && e.Code != engine.CodeNotFound && statusOf[e.Code] != 0 {
		return s.renderPay(w, r, q, statusOf[e.Code], payError(q.lang, e))
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, d.CheckoutURL, http.StatusSeeOther)
	return nil
}

// payError is a refusal of a payer's action in one plain sentence in
// their language: what the engine says is for developers.
func payError(lang string, e *engine.Error) string {
	switch e.Code {
	case engine.CodeConflict, engine.CodeDepositTerminal:
		return translate(lang, "pay_err_closed")
	case engine.CodeForbidden, engine.CodeMethodUnavailable, engine.CodeInvalidRequest:
		return translate(lang, "pay_err_method")
	}
	return translate(lang, "pay_err_other")
}

// payCancel is an invoice's payer going back to the merchant's cancel_url
// without paying; its open checkout ends.
func (s *server) payCancel(w http.ResponseWriter, r *http.Request, q *request) error {
	token := r.PathValue("token")
	inv, err := s.eng.CancelCompatInvoice(r.Context(), token)
	var e *engine.Error
	if errors.As(err, &e) && e.Code != engine.CodeNotFound && statusOf[e.Code] != 0 {
		return s.renderPay(w, r, q, statusOf[e.Code], payError(q.lang, e))
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, engine.CompatReturnURL(inv.CancelURL, token), http.StatusSeeOther)
	return nil
}
