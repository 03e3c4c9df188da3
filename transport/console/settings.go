package console

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
)

// The organization's settings. The owner of an organization sets what its
// payers see (name, logo, support contact) and how long a checkout stays
// open. What the organization pays payd (fees and commissions) and what
// it may take (deposits, H2H, withdrawals) are the platform's: only a
// platform owner changes them, so a merchant cannot lower the platform's
// fees from its own console.

type settingsData struct {
	Org *engine.Organization
	// Platform: the operator may change the platform's settings too.
	Platform bool
	Form     map[string]string
	Errors   map[string]string
	// Methods are the deposit methods, each turned on or off.
	Methods []string
}

// depositMethods are the methods a deposit may name, in catalog order.
func depositMethods() []string {
	var out []string
	for _, m := range engine.Methods() {
		if m.IsDeposit() {
			out = append(out, m.Name)
		}
	}
	return out
}

func (s *server) settings(w http.ResponseWriter, r *http.Request, q *request) error {
	return s.renderSettings(w, r, q, http.StatusOK, settingsData{})
}

func (s *server) renderSettings(w http.ResponseWriter, r *http.Request, q *request, status int, data settingsData) error {
	if q.org == "" {
		return errNotFound
	}
	org, err := s.eng.GetOrganization(r.Context(), q.org)
	if err != nil {
		return err
	}
	data.Org = org
	data.Methods = depositMethods()
	allowImage(w, org.LogoURL)
	data.Platform = q.operator.Platform() && hasRole(q.operator, engine.RoleOwner)
	if data.Form == nil {
		data.Form = map[string]string{
			"name": org.Name, "logo_url": org.LogoURL, "support_contact": org.SupportContact,
			"instructions_window": minutes(org.InstructionsWindow), "redirect_window": minutes(org.RedirectWindow),
			"deposit_fee_percent": org.DepositFeePercent.String(), "deposit_fee_fixed": org.DepositFeeFixed.String(),
			"withdraw_commission_percent": org.WithdrawCommissionPercent.String(), "withdraw_commission_fixed": org.WithdrawCommissionFixed.String(),
		}
		for _, m := range data.Methods {
			if org.MethodEnabled(m) {
				data.Form["method_"+m] = "on"
			}
		}
		for k, v := range map[string]bool{"deposits_enabled": org.DepositsEnabled, "h2h_enabled": org.H2HEnabled, "withdrawals_enabled": org.WithdrawalsEnabled} {
			if v {
				data.Form[k] = "on"
			}
		}
	}
	return s.render(w, r, q, status, "settings", "settings", data)
}

func minutes(d time.Duration) string { return strconv.FormatInt(int64(d/time.Minute), 10) }

func (s *server) settingsSave(w http.ResponseWriter, r *http.Request, q *request) error {
	if q.org == "" {
		return errNotFound
	}
	f := r.PostForm
	form := map[string]string{}
	for k := range f {
		form[k] = f.Get(k)
	}
	fail := func(err error) error {
		if field, msg, ok := fieldError(q.lang, err); ok {
			return s.renderSettings(w, r, q, http.StatusBadRequest, settingsData{Form: form, Errors: map[string]string{field: msg}})
		}
		return err
	}
	str := func(k string) *string { v := strings.TrimSpace(f.Get(k)); return &v }
	set := engine.OrganizationSettings{Name: str("name"), LogoURL: str("logo_url"), SupportContact: str("support_contact")}
	off := []string{}
	for _, m := range depositMethods() {
		if f.Get("method_"+m) != "on" {
			off = append(off, m)
		}
	}
	set.DisabledMethods = &off
	for k, dst := range map[string]**time.Duration{"instructions_window": &set.InstructionsWindow, "redirect_window": &set.RedirectWindow} {
		n, err := strconv.ParseInt(strings.TrimSpace(f.Get(k)), 10, 64)
		if err != nil || n <= 0 {
			return fail(engine.Invalid(k, "must be whole minutes"))
		}
		d := time.Duration(n) * time.Minute
		*dst = &d
	}
	if q.operator.Platform() && hasRole(q.operator, engine.RoleOwner) {
		for k, dst := range map[string]**bool{"deposits_enabled": &set.DepositsEnabled, "h2h_enabled": &set.H2HEnabled, "withdrawals_enabled": &set.WithdrawalsEnabled} {
			v := f.Get(k) == "on"
			*dst = &v
		}
		for k, dst := range map[string]**decimal.Decimal{
			"deposit_fee_percent": &set.DepositFeePercent, "deposit_fee_fixed": &set.DepositFeeFixed,
			"withdraw_commission_percent": &set.WithdrawCommissionPercent, "withdraw_commission_fixed": &set.WithdrawCommissionFixed,
		} {
			d, err := decimal.NewFromString(strings.TrimSpace(f.Get(k)))
			if err != nil {
				return fail(engine.Invalid(k, "must be a number"))
			}
			*dst = &d
		}
	}
	if _, err := s.eng.UpdateOrganization(q.ctx(r), q.org, set); err != nil {
		return fail(err)
	}
	return done(w, r, q, "/console/settings", "done_settings")
}

// orgCreate creates an organization: a platform owner's alone (the first
// owner of a payd is one, made by the admin CLI). Its first API key and
// signing secret are shown once, on its keys page.
func (s *server) orgCreate(w http.ResponseWriter, r *http.Request, q *request) error {
	if !q.operator.Platform() {
		return errForbidden
	}
	name := strings.TrimSpace(r.PostForm.Get("name"))
	creds, err := s.eng.CreateOrganization(q.ctx(r), engine.OrganizationSettings{Name: &name})
	if field, msg, ok := fieldError(q.lang, err); ok {
		return s.render(w, r, q, http.StatusBadRequest, "overview", "overview", overviewData{NewOrgName: name, Errors: map[string]string{field: msg}})
	}
	if err != nil {
		return err
	}
	q.org = creds.Organization.ID
	if q.orgs, err = s.eng.ListOrganizations(r.Context()); err != nil {
		return err
	}
	return s.renderKeys(w, r, q, keysData{Credentials: creds.APIKey, New: true})
}
