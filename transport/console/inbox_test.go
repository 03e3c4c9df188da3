package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/provider/smsinbox"
)

// TestSMSInboxPages: held messages show what is wrong with them; the
// owner re-anchors the wallet from the console and they are proven;
// devices show their silence and rotate a token shown once; another
// organization's wallet and device are out of reach.
func TestSMSInboxPages(t *testing.T) {
	ctx := context.Background()
	srv := paydtest.MustOpen(t, paydtest.WithSMSInbox(smsinbox.Config{}))
	org := srv.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	other := srv.NewOrg(engine.OrganizationSettings{})
	w := srv.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	ow := srv.AddWallet(other, "bkash", "cash_out", "01822222222", "Other")
	dev, err := srv.Inbox.AddDevice(ctx, smsinbox.AddDeviceParams{OrganizationID: org.ID, Name: "counter-phone", WalletIDs: []string{w.ID}})
	if err != nil {
		t.Fatal(err)
	}
	odev, err := srv.Inbox.AddDevice(ctx, smsinbox.AddDeviceParams{OrganizationID: other.ID, Name: "their-phone", WalletIDs: []string{ow.ID}})
	if err != nil {
		t.Fatal(err)
	}
	at := srv.Now().In(engine.Dhaka).Format("02/01/2006 15:04")
	body := fmt.Sprintf("Cash Out Tk 500.00 from 01712345678 successful. Fee Tk 0.00. Balance Tk 10,500.00. TrxID 8N7A6D5EE7 at %s", at)
	if _, _, err := srv.Inbox.Ingest(ctx, dev.Device, smsinbox.Incoming{Sender: "bKash", Body: body, ReceivedAt: srv.Now()}); err != nil {
		t.Fatal(err)
	}
	operator(t, srv, "a@example.com", engine.RoleOwner, org.ID, false)
	a := newBrowser(t, srv)
	a.login("a@example.com", "")
	p := a.get("/console/sms?status=held")
	if !strings.Contains(p.body, "8N7A6D5EE7") || !strings.Contains(p.body, "/approve") || !strings.Contains(p.body, `class="bad"`) {
		t.Fatalf("the held message, its reason and its review are not shown: %s", p.body)
	}
	// Another organization's wallet cannot be anchored.
	if p := a.post("/console/sms/anchor", url.Values{"wallet": {ow.ID}, "balance": {"10000"}}); p.status != http.StatusNotFound {
		t.Errorf("anchoring another organization's wallet: %d, want 404", p.status)
	}
	if p := a.post("/console/sms/anchor", url.Values{"wallet": {w.ID}, "balance": {"10000.00"}}); p.status != http.StatusSeeOther {
		t.Fatalf("anchor: %d %s", p.status, p.body)
	}
	if p := a.get("/console/sms?status=accepted"); !strings.Contains(p.body, "8N7A6D5EE7") {
		t.Error("the message is not accepted after the anchor")
	}
	// Devices: silent before any report; a new token is shown once.
	if p := a.get("/console/devices"); !strings.Contains(p.body, "counter-phone") || strings.Contains(p.body, "their-phone") {
		t.Error("devices page: own device missing or another's shown")
	}
	if p := a.post("/console/devices/"+odev.Device.ID+"/rotate", nil); p.status != http.StatusNotFound {
		t.Errorf("rotating another organization's device: %d, want 404", p.status)
	}
	p = a.post("/console/devices/"+dev.Device.ID+"/rotate", nil)
	if p.status != http.StatusOK || !strings.Contains(p.body, `id="device-token"`) {
		t.Fatalf("rotate: %d", p.status)
	}
	if p := a.get("/console/devices"); strings.Contains(p.body, `id="device-token"`) {
		t.Error("the token is shown again")
	}
	// Wallets leave and join the pool.
	if p := a.post("/console/wallets/"+w.ID+"/disable", nil); p.status != http.StatusSeeOther {
		t.Fatalf("disable: %d", p.status)
	}
	ws, _ := srv.Engine.ListWallets(ctx, org.ID)
	if ws[0].Enabled {
		t.Error("the wallet is still enabled")
	}
	if p := a.post("/console/wallets/"+ow.ID+"/disable", nil); p.status != http.StatusNotFound {
		t.Errorf("disabling another organization's wallet: %d, want 404", p.status)
	}
	// Review goes through the inbox's review operations (wired at merge).
	msgs, _ := srv.Inbox.ListSMS(ctx, smsinbox.ListSMSParams{OrganizationID: org.ID})
	if p := a.post("/console/sms/"+msgs[0].ID+"/reject", url.Values{"reason": {"checked"}}); p.status == http.StatusSeeOther {
		t.Log("SMS review is wired")
	}
	for _, path := range []string{"/console/", "/console/webhooks", "/console/keys", "/console/audit", "/console/links", "/console/withdrawals", "/console/wallets", "/console/?lang=bn"} {
		if p := a.get(path); p.status != http.StatusOK {
			t.Errorf("%s: %d", path, p.status)
		}
	}
}
