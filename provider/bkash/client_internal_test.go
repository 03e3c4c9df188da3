package bkash

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestEnvelopes: v1 operations need statusCode "0000"; the v2 refund
// operations answer without one and name an error with errorCode or
// externalCode (bKash's refund page and clients show both).
func TestEnvelopes(t *testing.T) {
	for _, c := range []struct {
		name, body string
		v2         bool
		code       string // "" for success
	}{
		{"v1 success", `{"statusCode":"0000","statusMessage":"Successful","paymentID":"TR1"}`, false, ""},
		{"v1 error", `{"statusCode":"2062","statusMessage":"The payment has already been completed"}`, false, "2062"},
		{"v1 older error", `{"errorCode":"2056","errorMessage":"Invalid Payment State"}`, false, "2056"},
		{"v1 without statusCode", `{"paymentID":"TR1"}`, false, ""},
		{"v2 success", `{"originalTrxId":"TRX1","refundTrxId":"RFD1","refundTransactionStatus":"Completed","refundAmount":"1.00"}`, true, ""},
		{"v2 errorCode", `{"errorCode":"2072","errorMessageEn":"Refund amount not valid","errorMessageBn":""}`, true, "2072"},
		{"v2 externalCode", `{"internalCode":"E1","externalCode":"2071","errorMessageEn":"Refund after 60 days not allowed"}`, true, "2071"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(c.body)) }))
		var out refundAnswer
		err := (&client{http: srv.Client()}).do(context.Background(), srv.URL, nil, map[string]string{}, &out, c.v2)
		srv.Close()
		switch a := (*apiError)(nil); {
		case c.name == "v1 without statusCode":
			if !errors.As(err, &a) || a.Code != "" {
				t.Errorf("%s: %v, want a refusal", c.name, err)
			}
		case c.code == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.code != "" && (!errors.As(err, &a) || a.Code != c.code):
			t.Errorf("%s: %v, want code %s", c.name, err, c.code)
		}
		if c.name == "v2 success" && out.RefundTrxID != "RFD1" {
			t.Errorf("v2 success read %+v", out)
		}
	}
}
