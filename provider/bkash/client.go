package bkash

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The calls of bKash's tokenized checkout API. Grant and refresh send the
// username and password as headers and the app key and secret in the body;
// every other call sends the id_token as Authorization and the app key as
// X-App-Key. bKash answers its own errors with HTTP 200 and a statusCode
// other than "0000".

const codeOK = "0000"

// Status codes the provider acts on (bKash's error tables; the provider's
// documentation page lists them with what payd does). Any other code is
// bKash refusing: retried where retrying is safe, a failure where not.
const (
	codeAlreadyCompleted = "2062" // execute: "The payment has already been completed"
	codeAlreadyExecuted  = "2117" // execute: "The payment execution has already been completed"
	codeTrxNotFound      = "2033" // "Transaction not found": search of a trxID bKash does not have
)

// apiError is a bKash answer with a statusCode other than "0000". Its text
// holds the code and bKash's message, never a credential.
type apiError struct{ Code, Message string }

func (e *apiError) Error() string { return "bkash: " + e.Code + " " + e.Message }

// errUnauthorized is HTTP 401: the id_token was refused.
var errUnauthorized = errors.New("bkash: token refused")

// unreachable wraps a transport error, a 5xx or an unreadable answer.
type unreachable struct{ reason string }

func (e *unreachable) Error() string { return "bkash: unreachable: " + e.reason }

func isAPIError(err error, code string) bool {
	var a *apiError
	return errors.As(err, &a) && a.Code == code
}

// credentials are an organization's bKash API credentials.
type credentials struct {
	AppKey    string `json:"app_key"`
	AppSecret string `json:"app_secret"`
	Username  string `json:"username"`
	Password  string `json:"password"`
	BaseURL   string `json:"base_url"`
}

// token is a granted id_token and its refresh token.
type token struct {
	ID      string    `json:"id_token"`
	Refresh string    `json:"refresh_token"`
	Expires time.Time `json:"expires"`
	// RefreshBy is when the refresh token itself is no longer tried.
	RefreshBy time.Time `json:"refresh_by"`
}

type client struct {
	http *http.Client
}

// call posts body to url and decodes a "0000" answer into out.
func (c *client) call(ctx context.Context, url string, headers map[string]string, body, out any) error {
	return c.do(ctx, url, headers, body, out, false)
}

// do is call; v2 is the refund operations' envelope, whose answers carry
// no statusCode: an answer is an error when it names an error code.
func (c *client) do(ctx context.Context, url string, headers map[string]string, body, out any, v2 bool) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// The URL error names the URL only: no credential is in it.
		return &unreachable{reason: scrub(err)}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return &unreachable{reason: "reading the answer"}
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return errUnauthorized
	case resp.StatusCode != http.StatusOK:
		return &unreachable{reason: fmt.Sprintf("HTTP %d", resp.StatusCode)}
	}
	var head struct {
		StatusCode     string `json:"statusCode"`
		StatusMessage  string `json:"statusMessage"`
		ErrorCode      string `json:"errorCode"`
		ErrorMessage   string `json:"errorMessage"`
		ExternalCode   string `json:"externalCode"`
		ErrorMessageEn string `json:"errorMessageEn"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return &unreachable{reason: "an answer that is not JSON"}
	}
	// Older versions and the v2 refund operations name an error with
	// errorCode (or externalCode) and errorMessage (or errorMessageEn).
	code := cmp.Or(head.StatusCode, head.ErrorCode, head.ExternalCode)
	msg := cmp.Or(head.StatusMessage, head.ErrorMessage, head.ErrorMessageEn)
	if code != codeOK && (code != "" || !v2) {
		return &apiError{Code: code, Message: clip(msg)}
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return &unreachable{reason: "an answer of unexpected shape"}
	}
	return nil
}

// scrub keeps a transport error's kind, not its URL's query or body.
func scrub(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return ue.Op + ": timeout"
		}
		return ue.Op + ": " + clip(ue.Err.Error())
	}
	return clip(err.Error())
}

func clip(s string) string {
	if len(s) > 120 {
		s = s[:120]
	}
	return strings.ToValidUTF8(s, "?")
}

type tokenAnswer struct {
	IDToken      string `json:"id_token"`
	RefreshToken string `json:"refresh_token"`
	ExpiresIn    int    `json:"expires_in"`
}

func (c *client) grant(ctx context.Context, cr credentials) (*tokenAnswer, error) {
	var a tokenAnswer
	err := c.call(ctx, cr.BaseURL+"/tokenized/checkout/token/grant",
		map[string]string{"username": cr.Username, "password": cr.Password},
		map[string]string{"app_key": cr.AppKey, "app_secret": cr.AppSecret}, &a)
	return &a, err
}

func (c *client) refresh(ctx context.Context, cr credentials, refreshToken string) (*tokenAnswer, error) {
	var a tokenAnswer
	err := c.call(ctx, cr.BaseURL+"/tokenized/checkout/token/refresh",
		map[string]string{"username": cr.Username, "password": cr.Password},
		map[string]string{"app_key": cr.AppKey, "app_secret": cr.AppSecret, "refresh_token": refreshToken}, &a)
	return &a, err
}

// paymentAnswer is create's, execute's and status's answer.
type paymentAnswer struct {
	PaymentID             string `json:"paymentID"`
	BkashURL              string `json:"bkashURL"`
	Amount                string `json:"amount"`
	Currency              string `json:"currency"`
	Intent                string `json:"intent"`
	MerchantInvoiceNumber string `json:"merchantInvoiceNumber"`
	TransactionStatus     string `json:"transactionStatus"`
	TrxID                 string `json:"trxID"`
	CustomerMsisdn        string `json:"customerMsisdn"`
	PaymentExecuteTime    string `json:"paymentExecuteTime"`
}

// searchAnswer is the search transaction's.
type searchAnswer struct {
	TrxID                 string `json:"trxID"`
	TransactionStatus     string `json:"transactionStatus"`
	TransactionType       string `json:"transactionType"`
	Amount                string `json:"amount"`
	Currency              string `json:"currency"`
	CustomerMsisdn        string `json:"customerMsisdn"`
	OrganizationShortCode string `json:"organizationShortCode"`
	CompletedTime         string `json:"completedTime"`
}

// refundAnswer is one refund, as the refund and its status report it.
type refundAnswer struct {
	RefundTrxID  string `json:"refundTrxId"`
	Status       string `json:"refundTransactionStatus"`
	RefundAmount string `json:"refundAmount"`
	SKU          string `json:"sku"`
}

type refundStatusAnswer struct {
	Refunds []refundAnswer `json:"refundTransactions"`
}

// origin is the base URL's scheme and host, under which the v2 refund
// operations are.
func origin(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	return u.Scheme + "://" + u.Host
}

// bkashTimeLayouts are the ways bKash writes a time.
var bkashTimeLayouts = []string{"2006-01-02T15:04:05:000 GMT-0700", "2006-01-02T15:04:05.000 GMT-0700", time.RFC3339}

func parseTime(s string) (time.Time, bool) {
	for _, l := range bkashTimeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}
