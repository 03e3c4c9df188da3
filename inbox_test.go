package payd_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/provider/smsinbox"
)

// TestMetricsReportTheSMSInbox: message counts by status, each device's
// silence by its operator's label, and the wallets out of rotation, by
// value, as the clock moves past the silence limit.
func TestMetricsReportTheSMSInbox(t *testing.T) {
	ctx := context.Background()
	s := paydtest.MustOpen(t, paydtest.WithSMSInbox(smsinbox.Config{Silence: 5 * time.Minute}))
	org := s.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	proven := s.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	s.AddWallet(org, "bkash", "cash_out", "01899999999", "Unproven")
	dev, err := s.Inbox.AddDevice(ctx, smsinbox.AddDeviceParams{OrganizationID: org.ID, Name: "counter-phone", WalletIDs: []string{proven.ID}})
	if err != nil {
		t.Fatal(err)
	}
	post := func(path, body string) {
		t.Helper()
		r, _ := http.NewRequest(http.MethodPost, s.URL+"/api/v1/devices/"+path, bytes.NewBufferString(body))
		r.Header.Set("Authorization", "Bearer "+dev.Token)
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", path, res.StatusCode)
		}
	}
	post("heartbeat", `{}`)
	post("sms", `{"sender":"bKash","body":"Your OTP is 1234"}`)
	post("sms", `{"sender":"bKash","body":"Recharge offer: 10 GB for Tk 99"}`)
	s.Clock.Add(90 * time.Second)

	families := scrape(t, s)
	if got := gaugeValue(t, families, "payd_sms_messages", map[string]string{"status": smsinbox.StatusUnparsed}); got != 2 {
		t.Errorf("unparsed messages: %v, want 2", got)
	}
	if got := gaugeValue(t, families, "payd_sms_messages", map[string]string{"status": smsinbox.StatusAccepted}); got != 0 {
		t.Errorf("accepted messages: %v, want 0", got)
	}
	device := map[string]string{"device": "counter-phone"}
	if got := gaugeValue(t, families, "payd_sms_device_silence_seconds", device); got != 90 {
		t.Errorf("silence: %v s, want 90", got)
	}
	if got := gaugeValue(t, families, "payd_sms_wallets_out_of_rotation", nil); got != 1 {
		t.Errorf("wallets out of rotation: %v, want 1 (the unproven one)", got)
	}

	s.Clock.Add(10 * time.Minute)
	families = scrape(t, s)
	if got := gaugeValue(t, families, "payd_sms_device_silence_seconds", device); got != 690 {
		t.Errorf("silence: %v s, want 690", got)
	}
	if got := gaugeValue(t, families, "payd_sms_wallets_out_of_rotation", nil); got != 2 {
		t.Errorf("wallets out of rotation after the device went silent: %v, want 2", got)
	}
}

// TestMetricsReportPayoutsWaitingForAnOperator: the SMS inbox's manual
// payouts queued and matched, by count and oldest age, until an operator
// records them.
func TestMetricsReportPayoutsWaitingForAnOperator(t *testing.T) {
	ctx := context.Background()
	s := paydtest.MustOpen(t, paydtest.WithSMSInbox(smsinbox.Config{}))
	org := s.NewOrg(engine.OrganizationSettings{WithdrawalsEnabled: ptr(true)})
	s.Fund(org, "10000")
	waiting := func(state string) (items, age float64) {
		t.Helper()
		families := scrape(t, s)
		labels := map[string]string{"state": state}
		return gaugeValue(t, families, "payd_sms_payouts_waiting", labels),
			gaugeValue(t, families, "payd_sms_payouts_waiting_oldest_age_seconds", labels)
	}
	if n, age := waiting(smsinbox.PayoutQueued); n != 0 || age != 0 {
		t.Errorf("queued before any withdrawal: %v, %v s", n, age)
	}

	var ids []string
	for _, mid := range []string{"wd-1", "wd-2", "wd-3"} {
		res := s.Do(org, paydtest.Request{Path: "/api/v1/withdraws", APIKey: org.APIKey, Body: paydtest.Withdrawal(paydtest.KV{"merchant_id", `"` + mid + `"`})})
		if res.Status != http.StatusCreated {
			t.Fatalf("withdraw %s: %d %s", mid, res.Status, res.Body)
		}
		ids = append(ids, paydtest.Str(res.JSON, "id"))
		if _, err := s.Engine.ProcessPayouts(ctx); err != nil {
			t.Fatal(err)
		}
		s.Clock.Add(time.Minute)
	}
	// An SMS matched the second; it waits for the operator's confirmation.
	if err := smsinbox.NewSQLStore(s.Config.Store).InboxTx(ctx, func(ctx context.Context, tx smsinbox.Tx) error {
		mp, err := tx.LockManualPayout(ctx, ids[1])
		if err != nil {
			return err
		}
		mp.Status = smsinbox.PayoutMatched
		return tx.UpdateManualPayout(ctx, mp)
	}); err != nil {
		t.Fatal(err)
	}
	if n, age := waiting(smsinbox.PayoutQueued); n != 2 || age != 180 {
		t.Errorf("queued: %v, oldest %v s; want 2, 180", n, age)
	}
	if n, age := waiting(smsinbox.PayoutMatched); n != 1 || age != 120 {
		t.Errorf("matched: %v, oldest %v s; want 1, 120", n, age)
	}

	if _, err := s.Inbox.CompletePayout(ctx, ids[0], "BK7Q2M9XA1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Inbox.CompletePayout(ctx, ids[1], "BK7Q2M9XA2"); err != nil {
		t.Fatal(err)
	}
	if n, age := waiting(smsinbox.PayoutQueued); n != 1 || age != 60 {
		t.Errorf("queued after the operator sent the first: %v, oldest %v s; want 1, 60", n, age)
	}
	if n, age := waiting(smsinbox.PayoutMatched); n != 0 || age != 0 {
		t.Errorf("matched after the operator confirmed it: %v, oldest %v s; want 0, 0", n, age)
	}
}
