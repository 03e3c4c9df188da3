package paydserver_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydserver"
	"github.com/payd-engine/payd/paydserver/paydtest"
	"github.com/payd-engine/payd/provider/smsinbox"
)

// TestMetricsReportTheSMSInbox: message counts by status, each device's
// silence by its operator's label, and the wallets out of rotation, by
// value, as the clock moves past the silence limit.
func TestMetricsReportTheSMSInbox(t *testing.T) {
	ctx := context.Background()
	s := paydtest.MustOpen(t, func(c *paydserver.Config) {
		c.Provider, c.SMSSilence = paydserver.ProviderSMSInbox, 5*time.Minute
	})
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
