// Package bkashsim is a bKash tokenized checkout API for tests: an
// httptest server that answers as bKash's documented API does (token grant
// and refresh, create, execute, payment status, search transaction, the v2
// refund and its status), with bKash's own errors as HTTP 200 and a
// statusCode other than "0000", tokens that expire, and faults a test
// injects (a 5xx, a slow answer, an answer lost after the work was done).
//
// A payer's actions on bKash's payment page are methods: Approve, Cancel,
// Fail. Each returns the callback URL bKash would send the payer's browser
// to. Payments made in the bKash app to the merchant (what the search
// finds) are added with AddTransaction.
package bkashsim

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/shopspring/decimal"
)

// Version is the path the base URL ends with.
const Version = "/v1.2.0-beta"

// Status codes the simulator answers with: bKash's, from its published
// error tables (the checkout API's and the v2 refund's), except where a
// comment says bKash publishes none.
const (
	CodeOK                = "0000"
	CodeInvalidAppKey     = "2001"
	CodeInvalidPaymentID  = "2002" // execute or status of an unknown paymentID
	CodeInvalidAmount     = "2006"
	CodeInvalidCurrency   = "2007"
	CodeInvalidIntent     = "2008"
	CodeInsufficient      = "2023" // the payer's balance (and a refund the merchant's)
	CodeInvalidBody       = "2025"
	CodeDuplicate         = "2029"
	CodeTrxNotFound       = "2033" // search of an unknown trxID
	CodeInvalidPayment    = "2056" // execute of a payment its payer has not approved
	CodeAlreadyCompleted  = "2062" // execute of a payment already executed
	CodeInvalidMode       = "2063"
	CodeMissingField      = "2065"
	CodeRefundAmount      = "2072" // a refund beyond what is left of the payment
	CodeCannotReverse     = "2074" // stands in for an eleventh refund: bKash publishes no code for it
	CodeInvalidTrxID      = "2077" // a refund naming another payment's trxID
	CodeNotYetCompleted   = "2127" // a refund of a payment not completed
	CodeInvalidRefreshTok = "9999" // bKash publishes no code for a refused refresh token
)

// TokenLifetime is how long an id_token is good for.
const TokenLifetime = 3600 * time.Second

// App is a merchant's API credentials and its account.
type App struct {
	AppKey, AppSecret, Username, Password string
	// ShortCode is the merchant's wallet number, searched payments' receiver.
	ShortCode string
}

// Transaction is a payment to a merchant as search reports it.
type Transaction struct {
	TrxID     string
	Amount    decimal.Decimal
	Payer     string // customerMsisdn
	Type      string // "Payment", "Send Money", ...
	Status    string // "Completed", "Failed"
	Completed time.Time
	// Refunds made of it.
	Refunds []Refund
	app     string
	payment *Payment
}

// Refund is one refund of a transaction.
type Refund struct {
	TrxID, SKU, Reason string
	Amount             decimal.Decimal
	Completed          time.Time
}

// Payment is a checkout payment.
type Payment struct {
	ID, Invoice, CallbackURL, Payer string
	Amount                          decimal.Decimal
	// Status: Initiated, Approved (by the payer, not yet executed),
	// Completed, Cancelled, Failed.
	Status string
	TrxID  string
	app    string
}

// Fault is what an operation answers instead of its work, Times times
// (0: once).
type Fault struct {
	// HTTPStatus answers with this status and no JSON (a 5xx).
	HTTPStatus int
	// Code answers HTTP 200 with this statusCode.
	Code string
	// Delay holds the answer back this long (a timeout for the caller).
	Delay time.Duration
	// AfterWork does the operation, then faults: its answer is lost.
	AfterWork bool
	Times     int
}

// Server is a simulated bKash.
type Server struct {
	*httptest.Server
	clock clock.Clock

	mu        sync.Mutex
	apps      map[string]*App
	tokens    map[string]tokenInfo // id_token
	refreshes map[string]string    // refresh_token → app key
	payments  map[string]*Payment
	trx       map[string]*Transaction
	faults    map[string][]Fault
	calls     map[string]int
	seq       int
}

type tokenInfo struct {
	app     string
	expires time.Time
}

// New starts a simulator on the clock (nil: the wall clock), on a loopback
// port of its own.
func New(clk clock.Clock) *Server {
	s := newServer(clk)
	s.Start()
	return s
}

// Listen starts a simulator on the wall clock at addr ("127.0.0.1:9090"),
// for a person trying payd against it.
func Listen(addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := newServer(nil)
	s.Listener.Close()
	s.Listener = ln
	s.Start()
	return s, nil
}

func newServer(clk clock.Clock) *Server {
	if clk == nil {
		clk = clock.New()
	}
	s := &Server{clock: clk, apps: map[string]*App{}, tokens: map[string]tokenInfo{}, refreshes: map[string]string{},
		payments: map[string]*Payment{}, trx: map[string]*Transaction{}, faults: map[string][]Fault{}, calls: map[string]int{}}
	mux := http.NewServeMux()
	cp := Version + "/tokenized/checkout/"
	mux.HandleFunc("POST "+cp+"token/grant", s.grant)
	mux.HandleFunc("POST "+cp+"token/refresh", s.refresh)
	mux.HandleFunc("POST "+cp+"create", s.authed("create", s.create))
	mux.HandleFunc("POST "+cp+"execute", s.authed("execute", s.execute))
	mux.HandleFunc("POST "+cp+"payment/status", s.authed("status", s.status))
	mux.HandleFunc("POST "+cp+"general/searchTransaction", s.authed("search", s.search))
	mux.HandleFunc("POST /v2/tokenized-checkout/refund/payment/transaction", s.authed("refund", s.refund))
	mux.HandleFunc("POST /v2/tokenized-checkout/refund/payment/status", s.authed("refund_status", s.refundStatus))
	// The payment page, and the payer's actions on it for a person trying
	// the simulator by hand (tests call Approve, Cancel and Fail).
	mux.HandleFunc("GET /pay", func(w http.ResponseWriter, r *http.Request) {
		id := url.QueryEscape(r.URL.Query().Get("paymentID"))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>bKash (simulated)</title><form action="/pay/approve">
<input type="hidden" name="paymentID" value="%s">payer <input name="payer" value="01712345678">
<button>pay</button></form><p><a href="/pay/cancel?paymentID=%s">cancel</a> <a href="/pay/fail?paymentID=%s">fail</a>`, id, id, id)
	})
	for path, act := range map[string]func(r *http.Request) (string, error){
		"GET /pay/approve": func(r *http.Request) (string, error) {
			return s.Approve(r.URL.Query().Get("paymentID"), r.URL.Query().Get("payer"))
		},
		"GET /pay/cancel": func(r *http.Request) (string, error) { return s.Cancel(r.URL.Query().Get("paymentID")) },
		"GET /pay/fail":   func(r *http.Request) (string, error) { return s.Fail(r.URL.Query().Get("paymentID")) },
	} {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			cb, err := act(r)
			if err != nil {
				http.Error(w, err.Error(), http.StatusConflict)
				return
			}
			http.Redirect(w, r, cb, http.StatusSeeOther)
		})
	}
	// A payer paying a merchant in the bKash app (what the search finds),
	// for a person trying the simulator: app_key (default: the only
	// merchant), amount, payer. It answers the TrxID.
	mux.HandleFunc("POST /app/pay", func(w http.ResponseWriter, r *http.Request) {
		amount, err := decimal.NewFromString(r.FormValue("amount"))
		if err != nil || !amount.IsPositive() {
			http.Error(w, "amount: a positive decimal", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		key := r.FormValue("app_key")
		if key == "" && len(s.apps) == 1 {
			for k := range s.apps {
				key = k
			}
		}
		_, ok := s.apps[key]
		trx := s.nextID("APP")
		s.mu.Unlock()
		if !ok {
			http.Error(w, "app_key: not a merchant of this simulator", http.StatusBadRequest)
			return
		}
		s.AddTransaction(key, Transaction{TrxID: trx, Amount: amount, Payer: r.FormValue("payer"), Completed: s.clock.Now()})
		writeJSON(w, map[string]string{"trxID": trx})
	})
	s.Server = httptest.NewUnstartedServer(mux)
	return s
}

// BaseURL is the URL a provider is given (with the version).
func (s *Server) BaseURL() string { return s.URL + Version }

// AddApp registers a merchant's credentials.
func (s *Server) AddApp(a App) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apps[a.AppKey] = &a
}

// Fault makes the next calls of op ("grant", "refresh", "create",
// "execute", "status", "search", "refund", "refund_status") fail.
func (s *Server) Fault(op string, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.Times <= 0 {
		f.Times = 1
	}
	s.faults[op] = append(s.faults[op], f)
}

// Calls is how many times op was called (faulted calls included).
func (s *Server) Calls(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[op]
}

// RevokeTokens ends every id_token now (bKash's 401 before the expiry the
// caller knows).
func (s *Server) RevokeTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.tokens)
}

// Payment returns a copy of a checkout payment.
func (s *Server) Payment(id string) (Payment, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.payments[id]
	if !ok {
		return Payment{}, false
	}
	return *p, true
}

// Payments lists the checkout payments' IDs.
func (s *Server) Payments() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id := range s.payments {
		ids = append(ids, id)
	}
	return ids
}

// Transaction returns a copy of a transaction.
func (s *Server) Transaction(trxID string) (Transaction, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.trx[trxID]
	if !ok {
		return Transaction{}, false
	}
	c := *t
	c.Refunds = append([]Refund(nil), t.Refunds...)
	return c, true
}

// AddTransaction records a payment to the merchant whose app key is given,
// made in the bKash app (search finds it).
func (s *Server) AddTransaction(appKey string, t Transaction) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t.app = appKey
	if t.Type == "" {
		t.Type = "Payment"
	}
	if t.Status == "" {
		t.Status = "Completed"
	}
	s.trx[t.TrxID] = &t
}

// Approve is the payer paying on bKash's page from their wallet: the
// payment waits for the merchant's execute. It returns the callback URL.
func (s *Server) Approve(paymentID, payer string) (string, error) {
	return s.act(paymentID, "Approved", payer, "success")
}

// Cancel is the payer cancelling on bKash's page.
func (s *Server) Cancel(paymentID string) (string, error) {
	return s.act(paymentID, "Cancelled", "", "cancel")
}

// Fail is the payer failing on bKash's page (a wrong PIN three times).
func (s *Server) Fail(paymentID string) (string, error) {
	return s.act(paymentID, "Failed", "", "failure")
}

func (s *Server) act(paymentID, to, payer, status string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.payments[paymentID]
	if !ok || p.Status != "Initiated" {
		return "", fmt.Errorf("bkashsim: payment %q cannot be %s", paymentID, strings.ToLower(to))
	}
	p.Status, p.Payer = to, payer
	return CallbackURL(p.CallbackURL, paymentID, status), nil
}

// CallbackURL is the URL bKash sends the payer to: the merchant's callback
// URL with paymentID and status added (anyone can forge one).
func CallbackURL(callback, paymentID, status string) string {
	sep := "?"
	if strings.Contains(callback, "?") {
		sep = "&"
	}
	return callback + sep + url.Values{"paymentID": {paymentID}, "status": {status}, "signature": {"unverifiable"}}.Encode()
}

func (s *Server) nextID(prefix string) string {
	s.seq++
	return fmt.Sprintf("%s%08d", prefix, s.seq)
}

// fault takes the next fault of op, counting the call.
func (s *Server) fault(op string) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[op]++
	fs := s.faults[op]
	if len(fs) == 0 {
		return Fault{}, false
	}
	f := fs[0]
	if f.Times--; f.Times <= 0 {
		s.faults[op] = fs[1:]
	} else {
		fs[0] = f
	}
	return f, true
}

// serve runs work under op's fault, if any, and writes its answer.
func (s *Server) serve(w http.ResponseWriter, op string, work func() any) {
	f, faulted := s.fault(op)
	if faulted && f.Delay > 0 {
		time.Sleep(f.Delay)
	}
	if faulted && !f.AfterWork {
		faultAnswer(w, op, f)
		return
	}
	answer := work()
	if faulted {
		faultAnswer(w, op, f)
		return
	}
	writeJSON(w, answer)
}

func faultAnswer(w http.ResponseWriter, op string, f Fault) {
	switch {
	case f.HTTPStatus != 0:
		http.Error(w, "upstream error", f.HTTPStatus)
	case f.Code != "" && strings.HasPrefix(op, "refund"):
		writeJSON(w, v2Error(f.Code, "injected"))
	case f.Code != "":
		writeJSON(w, errAnswer(f.Code, "injected"))
	default:
		http.Error(w, "gateway timeout", http.StatusGatewayTimeout)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func errAnswer(code, msg string) map[string]string {
	return map[string]string{"statusCode": code, "statusMessage": msg}
}

func (s *Server) grant(w http.ResponseWriter, r *http.Request) {
	var body struct {
		AppKey    string `json:"app_key"`
		AppSecret string `json:"app_secret"`
	}
	_ = json.NewDecoder(r.Body).Decode(&body)
	s.serve(w, "grant", func() any {
		s.mu.Lock()
		defer s.mu.Unlock()
		a, ok := s.apps[body.AppKey]
		if !ok || a.AppSecret != body.AppSecret || a.Username != r.Header.Get("username") || a.Password != r.Header.Get("password") {
			return errAnswer(CodeInvalidAppKey, "Invalid App Key")
		}
		return s.issue(a.AppKey)
	})
}

func (s *Server) refresh(w http.ResponseWriter, r *http.Request) {
	var body struct {
		AppKey       string `json:"app_key"`
		AppSecret    string `json:"app_secret"`
		RefreshToken string `json:"refresh_token"`
	}
	_ = json.NewDecoder(r.Body).Decode(&body)
	s.serve(w, "refresh", func() any {
		s.mu.Lock()
		defer s.mu.Unlock()
		a, ok := s.apps[body.AppKey]
		if !ok || a.AppSecret != body.AppSecret || a.Username != r.Header.Get("username") || a.Password != r.Header.Get("password") {
			return errAnswer(CodeInvalidAppKey, "Invalid App Key")
		}
		if s.refreshes[body.RefreshToken] != a.AppKey {
			return errAnswer(CodeInvalidRefreshTok, "Invalid refresh token")
		}
		return s.issue(a.AppKey)
	})
}

// issue makes a token pair; s.mu is held.
func (s *Server) issue(app string) any {
	id, refresh := s.nextID("idtok-"), s.nextID("reftok-")
	s.tokens[id] = tokenInfo{app: app, expires: s.clock.Now().Add(TokenLifetime)}
	s.refreshes[refresh] = app
	return map[string]any{"statusCode": CodeOK, "statusMessage": "Successful", "id_token": id,
		"token_type": "Bearer", "expires_in": int(TokenLifetime / time.Second), "refresh_token": refresh}
}

// authed checks the id_token and X-App-Key: an unknown or expired token is
// HTTP 401, as bKash's gateway answers.
func (s *Server) authed(op string, h func(w http.ResponseWriter, app string, body map[string]string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		t, ok := s.tokens[r.Header.Get("Authorization")]
		valid := ok && s.clock.Now().Before(t.expires) && r.Header.Get("X-App-Key") == t.app
		s.mu.Unlock()
		if !valid {
			s.mu.Lock()
			s.calls[op]++
			s.mu.Unlock()
			w.WriteHeader(http.StatusUnauthorized)
			writeJSON(w, map[string]string{"message": "The incoming token has expired"})
			return
		}
		body := map[string]string{}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			s.serve(w, op, func() any { return errAnswer(CodeInvalidBody, "Invalid request body") })
			return
		}
		h(w, t.app, body)
	}
}

func (s *Server) create(w http.ResponseWriter, app string, b map[string]string) {
	s.serve(w, "create", func() any {
		amount, err := decimal.NewFromString(b["amount"])
		switch {
		case b["callbackURL"] == "" || b["merchantInvoiceNumber"] == "" || b["payerReference"] == "":
			return errAnswer(CodeMissingField, "Mendatory field missing")
		case b["mode"] != "0011":
			return errAnswer(CodeInvalidMode, "Mode is not valid as per request data")
		case err != nil || !amount.IsPositive():
			return errAnswer(CodeInvalidAmount, "Invalid amount")
		case b["currency"] != "BDT":
			return errAnswer(CodeInvalidCurrency, "Invalid currency")
		case b["intent"] != "sale":
			return errAnswer(CodeInvalidIntent, "Invalid intent")
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		p := &Payment{ID: s.nextID("TR0011"), Invoice: b["merchantInvoiceNumber"], CallbackURL: b["callbackURL"],
			Amount: amount, Status: "Initiated", app: app}
		s.payments[p.ID] = p
		return map[string]string{"statusCode": CodeOK, "statusMessage": "Successful", "paymentID": p.ID,
			"bkashURL": s.URL + "/pay?paymentID=" + p.ID, "callbackURL": p.CallbackURL,
			"successCallbackURL":   CallbackURL(p.CallbackURL, p.ID, "success"),
			"failureCallbackURL":   CallbackURL(p.CallbackURL, p.ID, "failure"),
			"cancelledCallbackURL": CallbackURL(p.CallbackURL, p.ID, "cancel"),
			"amount":               p.Amount.String(), "intent": "sale", "currency": "BDT", "paymentCreateTime": s.clock.Now().Format(bkashTime),
			"transactionStatus": p.Status, "merchantInvoiceNumber": p.Invoice}
	})
}

// bkashTime is how bKash writes times: "2023-07-24T12:12:40:123 GMT+0600".
const bkashTime = "2006-01-02T15:04:05:000 GMT-0700"

// TimeLayout is the layout of bKash's times, for clients.
const TimeLayout = bkashTime

func (s *Server) paymentAnswer(p *Payment) map[string]string {
	a := map[string]string{"statusCode": CodeOK, "statusMessage": "Successful", "paymentID": p.ID,
		"amount": p.Amount.String(), "currency": "BDT", "intent": "sale", "merchantInvoiceNumber": p.Invoice,
		"transactionStatus": p.Status, "verificationStatus": "Complete", "payerReference": p.Payer}
	if p.Status == "Approved" {
		a["transactionStatus"] = "Initiated" // bKash shows it unexecuted
	}
	if p.TrxID != "" {
		a["trxID"] = p.TrxID
		a["customerMsisdn"] = p.Payer
		a["paymentExecuteTime"] = s.trx[p.TrxID].Completed.Format(bkashTime)
	}
	return a
}

func (s *Server) execute(w http.ResponseWriter, app string, b map[string]string) {
	s.serve(w, "execute", func() any {
		s.mu.Lock()
		defer s.mu.Unlock()
		p, ok := s.payments[b["paymentID"]]
		switch {
		case !ok || p.app != app:
			return errAnswer(CodeInvalidPaymentID, "Invalid Payment ID")
		case p.Status == "Completed":
			return errAnswer(CodeAlreadyCompleted, "The payment has already been completed")
		case p.Status != "Approved":
			return errAnswer(CodeInvalidPayment, "Invalid Payment State")
		}
		p.Status, p.TrxID = "Completed", s.nextID("TRX")
		s.trx[p.TrxID] = &Transaction{TrxID: p.TrxID, Amount: p.Amount, Payer: p.Payer, Type: "Payment",
			Status: "Completed", Completed: s.clock.Now(), app: app, payment: p}
		return s.paymentAnswer(p)
	})
}

func (s *Server) status(w http.ResponseWriter, app string, b map[string]string) {
	s.serve(w, "status", func() any {
		s.mu.Lock()
		defer s.mu.Unlock()
		p, ok := s.payments[b["paymentID"]]
		if !ok || p.app != app {
			return errAnswer(CodeInvalidPaymentID, "Invalid Payment ID")
		}
		return s.paymentAnswer(p)
	})
}

func (s *Server) search(w http.ResponseWriter, app string, b map[string]string) {
	s.serve(w, "search", func() any {
		s.mu.Lock()
		defer s.mu.Unlock()
		t, ok := s.trx[b["trxID"]]
		if !ok || t.app != app { // another merchant's payment is not this one's to see
			return errAnswer(CodeTrxNotFound, "Transaction not found")
		}
		return map[string]string{"statusCode": CodeOK, "statusMessage": "Successful", "trxID": t.TrxID,
			"transactionStatus": t.Status, "transactionType": t.Type, "amount": t.Amount.String(), "currency": "BDT",
			"customerMsisdn": t.Payer, "organizationShortCode": s.apps[app].ShortCode,
			"initiationTime": t.Completed.Format(bkashTime), "completedTime": t.Completed.Format(bkashTime)}
	})
}

// refundTarget is the checkout transaction a v2 refund call names, or its
// error answer; s.mu is held.
func (s *Server) refundTarget(app string, b map[string]string) (*Transaction, any) {
	p, ok := s.payments[b["paymentId"]]
	if !ok || p.app != app {
		return nil, v2Error(CodeInvalidPaymentID, "Invalid Payment ID")
	}
	if p.Status != "Completed" {
		return nil, v2Error(CodeNotYetCompleted, "Transaction not yet completed")
	}
	if p.TrxID != b["trxId"] {
		return nil, v2Error(CodeInvalidTrxID, "Invalid TrxID")
	}
	return s.trx[p.TrxID], nil
}

// The v2 refund operations answer without statusCode; their errors carry
// errorCode and errorMessageEn/Bn.
func (s *Server) refund(w http.ResponseWriter, app string, b map[string]string) {
	s.serve(w, "refund", func() any {
		s.mu.Lock()
		defer s.mu.Unlock()
		t, fail := s.refundTarget(app, b)
		if fail != nil {
			return fail
		}
		amount, err := decimal.NewFromString(b["refundAmount"])
		total := amount
		for _, r := range t.Refunds {
			total = total.Add(r.Amount)
		}
		switch {
		case err != nil || !amount.IsPositive() || amount.Exponent() < -2 || total.GreaterThan(t.Amount):
			return v2Error(CodeRefundAmount, "Refund amount not valid")
		case len(t.Refunds) >= 10:
			return v2Error(CodeCannotReverse, "The transaction cannot be reversed")
		}
		r := Refund{TrxID: s.nextID("RFD"), SKU: b["sku"], Reason: b["reason"], Amount: amount, Completed: s.clock.Now()}
		t.Refunds = append(t.Refunds, r)
		return map[string]string{"originalTrxId": t.TrxID,
			"refundTrxId": r.TrxID, "refundTransactionStatus": "Completed", "originalTrxAmount": t.Amount.StringFixed(2),
			"refundAmount": r.Amount.StringFixed(2), "currency": "BDT", "completedTime": r.Completed.Format(bkashTime),
			"sku": r.SKU, "reason": r.Reason}
	})
}

func v2Error(code, msg string) map[string]string {
	return map[string]string{"errorCode": code, "errorMessageEn": msg, "errorMessageBn": ""}
}

func (s *Server) refundStatus(w http.ResponseWriter, app string, b map[string]string) {
	s.serve(w, "refund_status", func() any {
		s.mu.Lock()
		defer s.mu.Unlock()
		t, fail := s.refundTarget(app, b)
		if fail != nil {
			return fail
		}
		// As bKash's: each refund by its refundTrxId, without the sku sent.
		list := []map[string]string{}
		for _, r := range t.Refunds {
			list = append(list, map[string]string{"refundTrxId": r.TrxID, "refundTransactionStatus": "Completed",
				"refundAmount": r.Amount.StringFixed(2), "completedTime": r.Completed.Format(bkashTime)})
		}
		return map[string]any{"originalTrxId": t.TrxID, "originalTrxAmount": t.Amount.StringFixed(2),
			"originalTrxCompletedTime": t.Completed.Format(bkashTime), "refundTransactions": list}
	})
}
