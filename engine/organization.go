package engine

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Default payment windows of the contract.
const (
	DefaultInstructionsWindow = 15 * time.Minute
	DefaultRedirectWindow     = 30 * time.Minute
)

// Bounds on a configurable payment window.
const (
	minWindow = time.Minute
	maxWindow = 7 * 24 * time.Hour
)

// Organization is a merchant: the owner of API keys, receiving wallets,
// deposits and a balance. Every resource is visible only to its organization.
type Organization struct {
	ID   string
	Name string

	DepositsEnabled    bool
	H2HEnabled         bool
	WithdrawalsEnabled bool

	// InstructionsWindow is how long a display_instructions deposit accepts
	// transaction IDs; RedirectWindow how long a redirect checkout lives.
	InstructionsWindow time.Duration
	RedirectWindow     time.Duration

	// Fees: a percentage of the amount plus a fixed part, in BDT. These
	// are the defaults; MethodFees overrides them per payment method.
	DepositFeePercent         decimal.Decimal
	DepositFeeFixed           decimal.Decimal
	WithdrawCommissionPercent decimal.Decimal
	WithdrawCommissionFixed   decimal.Decimal
	MethodFees                MethodFees

	// LogoURL (an https URL) and SupportContact (a phone number, an email
	// address or a URL) are shown to payers beside Name; "" is none.
	LogoURL        string
	SupportContact string
	// DisabledMethods are the deposit methods the organization turned off,
	// in catalog order: no deposit, link or payer's page takes them.
	DisabledMethods []string

	CreatedAt time.Time
	UpdatedAt time.Time
}

// OrganizationSettings are the settings an operator chooses for an
// organization. In an update, nil fields keep their value.
type OrganizationSettings struct {
	Name                      *string
	DepositsEnabled           *bool
	H2HEnabled                *bool
	WithdrawalsEnabled        *bool
	InstructionsWindow        *time.Duration
	RedirectWindow            *time.Duration
	DepositFeePercent         *decimal.Decimal
	DepositFeeFixed           *decimal.Decimal
	WithdrawCommissionPercent *decimal.Decimal
	WithdrawCommissionFixed   *decimal.Decimal
	// DepositFees and WithdrawCommissions set per-method rules; a nil rule
	// removes a method's rule, so the default applies again.
	DepositFees         map[string]*FeeRule
	WithdrawCommissions map[string]*FeeRule
	// LogoURL and SupportContact: "" removes them.
	LogoURL        *string
	SupportContact *string
	// DisabledMethods replaces the methods turned off (empty: none).
	DisabledMethods *[]string
}

// apply validates s and copies its set fields onto org.
func (s OrganizationSettings) apply(org *Organization) error {
	if s.Name != nil {
		name := strings.TrimSpace(*s.Name)
		if name == "" || len(name) > 200 {
			return Invalid("name", "must be 1 to 200 characters")
		}
		if err := checkText("name", name); err != nil {
			return err
		}
		org.Name = name
	}
	if s.LogoURL != nil {
		logo := strings.TrimSpace(*s.LogoURL)
		if logo != "" {
			u, err := url.Parse(logo)
			if err != nil || u.Scheme != "https" || !LogoHost(u.Host) || u.User != nil || len(logo) > 500 {
				return Invalid("logo_url", "must be an https URL of at most 500 characters, or empty")
			}
		}
		org.LogoURL = logo
	}
	if s.DisabledMethods != nil {
		var off []string
		for _, m := range catalog {
			if slices.Contains(*s.DisabledMethods, m.Name) {
				off = append(off, m.Name)
			}
		}
		for _, name := range *s.DisabledMethods {
			if !isDepositMethod(name) {
				return Invalid("disabled_methods", "must be deposit methods: "+OneOf(names(func(m Method) []string {
					if m.IsDeposit() {
						return []string{m.Name}
					}
					return nil
				})))
			}
		}
		org.DisabledMethods = off
	}
	if s.SupportContact != nil {
		contact := strings.TrimSpace(*s.SupportContact)
		if len(contact) > 200 {
			return Invalid("support_contact", "must be at most 200 characters")
		}
		if err := checkText("support_contact", contact); err != nil {
			return err
		}
		org.SupportContact = contact
	}
	setBool := func(dst *bool, src *bool) {
		if src != nil {
			*dst = *src
		}
	}
	setBool(&org.DepositsEnabled, s.DepositsEnabled)
	setBool(&org.H2HEnabled, s.H2HEnabled)
	setBool(&org.WithdrawalsEnabled, s.WithdrawalsEnabled)
	for _, w := range []struct {
		field string
		src   *time.Duration
		dst   *time.Duration
	}{
		{"instructions_window", s.InstructionsWindow, &org.InstructionsWindow},
		{"redirect_window", s.RedirectWindow, &org.RedirectWindow},
	} {
		if w.src == nil {
			continue
		}
		if *w.src < minWindow || *w.src > maxWindow || *w.src%time.Second != 0 {
			return Invalid(w.field, "must be whole seconds between 1m and 168h")
		}
		*w.dst = *w.src
	}
	hundred := decimal.NewFromInt(100)
	for _, f := range []struct {
		field   string
		src     *decimal.Decimal
		dst     *decimal.Decimal
		percent bool
	}{
		{"deposit_fee_percent", s.DepositFeePercent, &org.DepositFeePercent, true},
		{"deposit_fee_fixed", s.DepositFeeFixed, &org.DepositFeeFixed, false},
		{"withdraw_commission_percent", s.WithdrawCommissionPercent, &org.WithdrawCommissionPercent, true},
		{"withdraw_commission_fixed", s.WithdrawCommissionFixed, &org.WithdrawCommissionFixed, false},
	} {
		if f.src == nil {
			continue
		}
		limit := decimal.Decimal{}
		if f.percent {
			limit = hundred
		}
		if !validFeePart(*f.src, limit) {
			return Invalid(f.field, "must be a non-negative decimal (a percentage at most 100) with at most 4 decimal places")
		}
		*f.dst = *f.src
	}
	for _, set := range []struct {
		field   string
		src     map[string]*FeeRule
		dst     *map[string]FeeRule
		methods func(string) bool
	}{
		{"deposit_fee", s.DepositFees, &org.MethodFees.Deposit, isDepositMethod},
		{"withdraw_commission", s.WithdrawCommissions, &org.MethodFees.Withdraw, func(m string) bool { return methodByName[m].Payout.Offered() }},
	} {
		for method, rule := range set.src {
			if !set.methods(method) {
				return Invalid(set.field, "unknown payment method "+method)
			}
			if rule == nil {
				delete(*set.dst, method)
				continue
			}
			if !validFeePart(rule.Percent, hundred) || !validFeePart(rule.Fixed, decimal.Decimal{}) {
				return Invalid(set.field, "must be a non-negative percentage (at most 100) and fixed part, each with at most 4 decimal places")
			}
			if *set.dst == nil {
				*set.dst = map[string]FeeRule{}
			}
			(*set.dst)[method] = *rule
		}
	}
	return nil
}

// validFeePart reports whether d is a non-negative fee part with at most four
// decimal places and, when max is not zero, at most max.
func validFeePart(d, max decimal.Decimal) bool {
	return !d.IsNegative() && d.Exponent() >= -4 && (max.IsZero() || d.LessThanOrEqual(max))
}

// OrganizationCredentials are the organization's first API key and signing
// secret, shown once at creation.
type OrganizationCredentials struct {
	Organization *Organization
	APIKey       *APIKeyCredentials
}

// CreateOrganization creates an organization with deposits enabled, the
// contract's default windows, zero fees and the given settings applied, and
// issues its first API key.
func (e *Engine) CreateOrganization(ctx context.Context, s OrganizationSettings) (*OrganizationCredentials, error) {
	if s.Name == nil {
		return nil, Invalid("name", "is required")
	}
	now := e.now()
	org := &Organization{
		ID:                 NewID(PrefixOrganization, now),
		DepositsEnabled:    true,
		InstructionsWindow: DefaultInstructionsWindow,
		RedirectWindow:     DefaultRedirectWindow,
		CreatedAt:          now,
		UpdatedAt:          now,
	}
	if err := s.apply(org); err != nil {
		return nil, err
	}
	var creds *APIKeyCredentials
	err := e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		if err := tx.CreateOrganization(ctx, org); err != nil {
			return err
		}
		var err error
		if creds, err = e.issueAPIKey(ctx, tx, org.ID, now); err != nil {
			return err
		}
		details := s.auditDetails()
		details["api_key_id"] = creds.APIKeyID
		return e.audit(ctx, tx, AuditOrgCreate, org.ID, org.ID, details)
	})
	if err != nil {
		return nil, err
	}
	return &OrganizationCredentials{Organization: org, APIKey: creds}, nil
}

// UpdateOrganization changes the settings of an organization.
// Returns not_found if it does not exist.
func (e *Engine) UpdateOrganization(ctx context.Context, id string, s OrganizationSettings) (*Organization, error) {
	var org *Organization
	err := e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		if org, err = tx.LockOrganization(ctx, id); err != nil {
			return notFound(err, "organization")
		}
		if err := s.apply(org); err != nil {
			return err
		}
		org.UpdatedAt = e.now()
		if err := tx.UpdateOrganization(ctx, org); err != nil {
			return err
		}
		return e.audit(ctx, tx, AuditOrgUpdate, org.ID, org.ID, s.auditDetails())
	})
	return org, err
}

// GetOrganization returns an organization or not_found.
func (e *Engine) GetOrganization(ctx context.Context, id string) (*Organization, error) {
	var org *Organization
	err := e.store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		org, err = tx.GetOrganization(ctx, id)
		return notFound(err, "organization")
	})
	return org, err
}

// ListOrganizations returns every organization, oldest first.
func (e *Engine) ListOrganizations(ctx context.Context) ([]*Organization, error) {
	var orgs []*Organization
	err := e.store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		orgs, err = tx.ListOrganizations(ctx)
		return err
	})
	return orgs, err
}

// FeeRule is a percentage of the amount plus a fixed part in BDT.
type FeeRule struct {
	Percent decimal.Decimal `json:"percent"`
	Fixed   decimal.Decimal `json:"fixed"`
}

// MethodFees are an organization's per-method fee overrides: deposit fees
// by deposit payment method, withdrawal commissions by payout method. A
// store keeps them as the JSON of this type (decimals are JSON strings, so
// they round-trip exactly).
type MethodFees struct {
	Deposit  map[string]FeeRule `json:"deposit,omitempty"`
	Withdraw map[string]FeeRule `json:"withdraw,omitempty"`
}

// logoHost is a host name (letters, digits, dots, hyphens) with an
// optional port: what a page's Content-Security-Policy may name as the
// logo's origin, nothing that could add a directive.
var logoHost = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(?::[0-9]{1,5})?$`)

// LogoHost reports whether host may be a logo's origin.
func LogoHost(host string) bool { return logoHost.MatchString(host) }

// MethodEnabled reports whether the organization takes deposits by method
// (it has not turned it off).
func (o *Organization) MethodEnabled(method string) bool {
	return !slices.Contains(o.DisabledMethods, method)
}

// DepositFee is the fee rule of a deposit payment method.
func (o *Organization) DepositFee(method string) FeeRule {
	if r, ok := o.MethodFees.Deposit[method]; ok {
		return r
	}
	return FeeRule{o.DepositFeePercent, o.DepositFeeFixed}
}

// WithdrawCommission is the commission rule of a payout method.
func (o *Organization) WithdrawCommission(method string) FeeRule {
	if r, ok := o.MethodFees.Withdraw[method]; ok {
		return r
	}
	return FeeRule{o.WithdrawCommissionPercent, o.WithdrawCommissionFixed}
}

// Of computes the rule for amount: percent of it plus the fixed part,
// rounded to the poisha half away from zero.
func (r FeeRule) Of(amount decimal.Decimal) decimal.Decimal {
	return amount.Mul(r.Percent).Div(decimal.NewFromInt(100)).Add(r.Fixed).Round(2)
}

// auditDetails describes the settings given (set fields only) for the
// audit log.
func (s OrganizationSettings) auditDetails() map[string]string {
	d := map[string]string{}
	str := func(k string, v fmt.Stringer) { d[k] = v.String() }
	if s.Name != nil {
		d["name"] = *s.Name
	}
	for k, v := range map[string]*bool{
		"deposits_enabled": s.DepositsEnabled, "h2h_enabled": s.H2HEnabled, "withdrawals_enabled": s.WithdrawalsEnabled,
	} {
		if v != nil {
			d[k] = strconv.FormatBool(*v)
		}
	}
	if s.LogoURL != nil {
		d["logo_url"] = *s.LogoURL
	}
	if s.DisabledMethods != nil {
		d["disabled_methods"] = strings.Join(*s.DisabledMethods, ",")
	}
	if s.SupportContact != nil {
		d["support_contact"] = *s.SupportContact
	}
	for k, v := range map[string]*time.Duration{"instructions_window": s.InstructionsWindow, "redirect_window": s.RedirectWindow} {
		if v != nil {
			str(k, *v)
		}
	}
	for k, v := range map[string]*decimal.Decimal{
		"deposit_fee_percent": s.DepositFeePercent, "deposit_fee_fixed": s.DepositFeeFixed,
		"withdraw_commission_percent": s.WithdrawCommissionPercent, "withdraw_commission_fixed": s.WithdrawCommissionFixed,
	} {
		if v != nil {
			str(k, *v)
		}
	}
	for prefix, rules := range map[string]map[string]*FeeRule{"deposit_fee.": s.DepositFees, "withdraw_commission.": s.WithdrawCommissions} {
		for method, r := range rules {
			if r == nil {
				d[prefix+method] = "default"
			} else {
				d[prefix+method] = r.Percent.String() + "%+" + r.Fixed.String()
			}
		}
	}
	return d
}
