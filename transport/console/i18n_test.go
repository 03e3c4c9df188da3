package console

import (
	"io/fs"
	"regexp"
	"testing"
)

// TestTextsCoverTheTemplates: every text a template or page names has an
// English and a Bangla version.
func TestTextsCoverTheTemplates(t *testing.T) {
	used := map[string]bool{}
	keyUse := regexp.MustCompile(`\.T "([a-z_0-9]+)"`)
	err := fs.WalkDir(files, "web", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(path)
		for _, m := range keyUse.FindAllSubmatch(b, -1) {
			used[string(m[1])] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"login_refused", "login_throttled", "login_busy", "logged_out", "setup_done", "pw_short", "pw_long", "pw_mismatch",
		"totp_wrong", "err_not_found", "err_forbidden", "err_internal", "done_payout_complete", "done_payout_fail", "done_sms_approve",
		"done_sms_reject", "done_sms_paste", "done_sms_anchor", "done_credit", "done_device_revoke", "done_wallet_enable",
		"done_wallet_disable", "done_redeliver", "done_key_revoke"} {
		used[k] = true
	}
	for _, name := range []string{"login", "setup", "overview", "deposits", "deposit", "withdrawals", "sms", "devices", "wallets",
		"webhooks", "keys", "audit", "links", "pay", "error", "busy"} {
		used["t_"+name] = true
	}
	for k := range used {
		tx, ok := texts[k]
		if !ok || tx[0] == "" || tx[1] == "" {
			t.Errorf("text %q lacks English or Bangla", k)
		}
	}
}
