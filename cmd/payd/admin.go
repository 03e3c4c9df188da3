package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/smsinbox"
)

// adminCommand is one "payd admin <noun> <verb>": it declares its flags on
// fs and returns the function that runs it, whose result is printed.
type adminCommand struct {
	summary string
	setup   func(fs *flag.FlagSet) func(ctx context.Context, eng *engine.Engine) (any, error)
	// inbox, instead of setup, declares a command of the SMS inbox provider.
	inbox func(fs *flag.FlagSet) func(ctx context.Context, inbox *smsinbox.Provider) (any, error)
	// creates marks "payd admin init", the one admin command that creates
	// a missing database; the others refuse to, so that a mistyped --db is
	// an error and not a new empty database.
	creates bool
}

var adminCommands = map[string]adminCommand{
	"init":                  {summary: "create the database and its master key file now, instead of on payd serve's first start", creates: true},
	"org create":            {summary: "create an organization and its first API key", setup: orgCreate},
	"org update":            {summary: "change an organization's switches, windows and fees", setup: orgUpdate},
	"org show":              {summary: "show an organization", setup: orgShow},
	"org list":              {summary: "list organizations", setup: orgList},
	"wallet add":            {summary: "add a receiving wallet to an organization's pool", setup: walletAdd},
	"wallet list":           {summary: "list an organization's receiving wallets", setup: walletList},
	"wallet enable":         {summary: "put a wallet back in the recipient pool", setup: walletEnable(true)},
	"wallet disable":        {summary: "take a wallet out of the recipient pool", setup: walletEnable(false)},
	"key create":            {summary: "issue an additional API key with its own signing secret", setup: keyCreate},
	"key list":              {summary: "list an organization's API keys", setup: keyList},
	"key rotate":            {summary: "replace an API key; the old one works for --grace more", setup: keyRotate},
	"key revoke":            {summary: "stop an API key from authenticating, now", setup: keyRevoke},
	"signing-secret rotate": {summary: "issue a new H2H signing secret; the previous one works for 24h", setup: signingSecretRotate},
	"balance show":          {summary: "show an organization's available and held balance", setup: balanceShow},
	"balance adjust":        {summary: "credit (or, with a negative amount, debit) an organization by hand", setup: balanceAdjust},
	"ledger":                {summary: "print an organization's journal, every movement with its entries", setup: ledgerShow},
	"ledger verify":         {summary: "recompute every organization's balances from its entries; exit 1 on any difference", setup: ledgerVerify},
	"webhook add":           {summary: "register an endpoint for an organization's events; prints its secret once", setup: webhookAdd},
	"webhook list":          {summary: "list an organization's webhook endpoints", setup: webhookList},
	"webhook remove":        {summary: "delete an endpoint and its deliveries", setup: webhookRemove},
	"webhook enable":        {summary: "put a disabled endpoint back in service", setup: webhookEnable},
	"webhook rotate-secret": {summary: "new endpoint secret; the previous one also signs for 24h", setup: webhookRotateSecret},
	"webhook redeliver":     {summary: "queue an event again, to one endpoint or to all enabled ones", setup: webhookRedeliver},
	"webhook events":        {summary: "list an organization's events with their deliveries and posts", setup: webhookEvents},
	"audit":                 {summary: "print an organization's audit log: every admin action, who and when", setup: auditShow},
	"device add":            {summary: "register a phone that forwards its wallets' SMS (smsinbox); prints its token once", inbox: deviceAdd},
	"device list":           {summary: "list an organization's SMS devices, when each last reported, and its wallets' balances", inbox: deviceList},
	"device revoke":         {summary: "stop a device's token now; its wallets leave the pool", inbox: deviceRevoke},
	"device rotate":         {summary: "give a device a new token; the old one stops working now; prints it once", inbox: deviceRotate},
	"sms stats":             {summary: "count an organization's SMS by status, and each wallet's held, conflicting and expired ones", inbox: smsStats},
	"sms settings":          {summary: "show or change an organization's SMS inbox settings: payout confirmation, held messages kept", inbox: smsSettings},
	"payout confirm":        {summary: "confirm a payout an SMS matched; the withdrawal succeeds", inbox: payoutConfirm},
	"sms list":              {summary: "list received SMS: parse results, status, and the deposit each was matched to", inbox: smsList},
	"sms anchor":            {summary: "set the balance a wallet's SMS chain continues from, as the phone shows it", inbox: smsAnchor},
	"sms unmatched":         {summary: "list proven payments (accepted SMS) that credited no deposit, with the deposit each was for", inbox: smsUnmatched},
	"deposit credit":        {summary: "credit a proven late payment to its deposit, once, audited (smsinbox)", inbox: depositCredit},
	"payout list":           {summary: "list the manual payouts waiting for an operator (smsinbox)", inbox: payoutList},
	"payout complete":       {summary: "record that you sent a queued payout; the withdrawal succeeds", inbox: payoutComplete},
	"payout fail":           {summary: "record that a queued payout cannot be sent; the withdrawal fails and its hold is released", inbox: payoutFail},
}

// adminUsage lists the admin commands whose name starts with prefix ("":
// all of them).
func adminUsage(w io.Writer, prefix string) {
	fmt.Fprintln(w, "usage: payd admin <command> [flags] [--db DSN] [--json]")
	fmt.Fprintln(w)
	names := make([]string, 0, len(adminCommands))
	for name := range adminCommands {
		if strings.HasPrefix(name, prefix) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %-24s %s\n", name, adminCommands[name].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Admin commands open an existing database; only init creates one (payd serve also does,")
	fmt.Fprintln(w, `on its first start). Run "payd admin <command> --help" for the flags of a command.`)
}

// isHelp is an argument that asks for the usage.
func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

func admin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		adminUsage(stderr, "")
		return errUsage
	}
	if isHelp(args[0]) {
		adminUsage(stdout, "")
		return flag.ErrHelp
	}
	// A command is one word ("ledger") or a noun and a verb ("org create").
	name, rest := args[0], args[1:]
	if len(args) > 1 {
		if _, ok := adminCommands[args[0]+" "+args[1]]; ok {
			name, rest = args[0]+" "+args[1], args[2:]
		}
	}
	cmd, ok := adminCommands[name]
	if !ok {
		// "payd admin org --help" lists the org commands.
		if len(args) > 1 && isHelp(args[1]) {
			adminUsage(stdout, args[0]+" ")
			return flag.ErrHelp
		}
		adminUsage(stderr, args[0]+" ")
		return fmt.Errorf("unknown admin command %q", strings.Join(args[:min(2, len(args))], " "))
	}
	fs := flag.NewFlagSet("payd admin "+name, flag.ContinueOnError)
	var sf storeFlags
	sf.register(fs)
	asJSON := fs.Bool("json", false, "print one JSON object")
	var runCmd func(context.Context, *engine.Engine) (any, error)
	var runInbox func(context.Context, *smsinbox.Provider) (any, error)
	switch {
	case cmd.inbox != nil:
		runInbox = cmd.inbox(fs)
	case cmd.setup != nil:
		runCmd = cmd.setup(fs)
	}
	if fs.Lookup("actor") == nil { // balance adjust declares its own
		fs.String("actor", env("USER", "admin"), "who is acting, recorded in the audit log (default $USER)")
	}
	if err := parseFlags(fs, rest, stdout, stderr); err != nil {
		return err
	}
	ctx = engine.WithActor(ctx, fs.Lookup("actor").Value.String())
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	db, err := sf.openDatabase(ctx, cmd.creates)
	if err != nil {
		return err
	}
	defer db.store.Close()
	store, keyring := db.store, db.keyring
	// Admin commands create no checkouts, so no provider is reachable
	// here, except the SMS inbox, which keeps its state in the store.
	var provider engine.Provider = noProvider{}
	var inbox *smsinbox.Provider
	if runInbox != nil {
		if inbox, err = smsinbox.New(smsinbox.Config{Store: smsinbox.NewSQLStore(store)}); err != nil {
			return err
		}
		provider = inbox
	}
	eng, err := engine.New(engine.Config{Store: store, Provider: provider, Keyring: keyring})
	if err != nil {
		return err
	}
	var out any
	switch {
	case inbox != nil:
		inbox.Attach(eng)
		out, err = runInbox(ctx, inbox)
	case runCmd != nil:
		out, err = runCmd(ctx, eng)
	default:
		out = newInitView(&sf, db)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		err = enc.Encode(out)
	} else if t, ok := out.(interface{ WriteText(io.Writer) error }); ok {
		err = t.WriteText(stdout)
	} else {
		err = printHuman(stdout, out)
	}
	// A report of a failed check is printed, then fails the command.
	if f, ok := out.(interface{ Err() error }); ok && err == nil {
		err = f.Err()
	}
	return err
}

// noProvider is the provider of admin commands, which never reach one.
type noProvider struct{}

func (noProvider) StartCheckout(context.Context, engine.CheckoutRequest) (*engine.Checkout, error) {
	return nil, engine.ErrMethodUnavailable
}

func (noProvider) LookupTransaction(context.Context, engine.LookupRequest) (*engine.ProviderTransaction, error) {
	return nil, engine.ErrProviderUnavailable
}

func (noProvider) CheckPayoutMethod(context.Context, string) error {
	return engine.ErrMethodUnavailable
}

func (noProvider) SendPayout(context.Context, engine.PayoutRequest) (*engine.Payout, error) {
	return nil, engine.ErrProviderUnavailable
}

func (noProvider) GetPayout(context.Context, string) (*engine.Payout, error) {
	return nil, engine.ErrProviderUnavailable
}

// printHuman prints a result as "key: value" lines, nested objects with
// dotted keys, and lists as blocks separated by blank lines.
func printHuman(w io.Writer, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	var obj any
	if err := dec.Decode(&obj); err != nil {
		return err
	}
	printValue(w, "", obj)
	return nil
}

// printValue prints v under the dotted key prefix. The objects of a
// top-level list print as blocks of their own fields, separated by blank
// lines; nested ones keep their path ("journal.entries[0].amount").
func printValue(w io.Writer, prefix string, v any) {
	switch val := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(val))
		for k := range val {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			key := k
			if prefix != "" {
				key = prefix + "." + k
			}
			printValue(w, key, val[k])
		}
	case []any:
		for i, item := range val {
			if _, isObject := item.(map[string]any); !isObject {
				fmt.Fprintf(w, "%s: %v\n", prefix, item)
				continue
			}
			if strings.Contains(prefix, ".") {
				printValue(w, fmt.Sprintf("%s[%d]", prefix, i), item)
				continue
			}
			if i > 0 {
				fmt.Fprintln(w)
			}
			printValue(w, "", item)
		}
	case nil:
		fmt.Fprintf(w, "%s: -\n", prefix)
	default:
		fmt.Fprintf(w, "%s: %v\n", prefix, val)
	}
}

// optionalBool is a boolean flag that knows whether it was given, so an
// update changes only what the operator named. "--h2h" alone means true.
type optionalBool struct{ v *bool }

func (b *optionalBool) String() string {
	if b == nil || b.v == nil {
		return ""
	}
	return strconv.FormatBool(*b.v)
}

func (b *optionalBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	b.v = &v
	return nil
}

func (b *optionalBool) IsBoolFlag() bool { return true }

// optionalDuration and optionalDecimal likewise record whether they were set.
type optionalDuration struct{ v *time.Duration }

func (d *optionalDuration) String() string {
	if d == nil || d.v == nil {
		return ""
	}
	return d.v.String()
}

func (d *optionalDuration) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	d.v = &v
	return nil
}

type optionalDecimal struct{ v *decimal.Decimal }

func (d *optionalDecimal) String() string {
	if d == nil || d.v == nil {
		return ""
	}
	return d.v.String()
}

func (d *optionalDecimal) Set(s string) error {
	v, err := decimal.NewFromString(s)
	if err != nil || strings.ContainsAny(s, "eE") {
		return fmt.Errorf("not a plain decimal: %q", s)
	}
	d.v = &v
	return nil
}

// orgSettingsFlags declares the flags of an organization's settings.
func orgSettingsFlags(fs *flag.FlagSet) func() engine.OrganizationSettings {
	var name string
	var deposits, h2h, withdrawals optionalBool
	var instructions, redirect optionalDuration
	var depFeePct, depFeeFixed, wdPct, wdFixed optionalDecimal
	fs.StringVar(&name, "name", "", "organization name")
	fs.Var(&deposits, "deposits", "allow deposits (default true at creation)")
	fs.Var(&h2h, "h2h", "allow H2H deposits")
	fs.Var(&withdrawals, "withdrawals", "allow withdrawals")
	fs.Var(&instructions, "instructions-window", "how long a display_instructions deposit accepts transaction IDs (default 15m)")
	fs.Var(&redirect, "redirect-window", "how long a redirect checkout lives (default 30m)")
	fs.Var(&depFeePct, "deposit-fee-percent", "deposit fee, percent of the amount (default 0)")
	fs.Var(&depFeeFixed, "deposit-fee-fixed", "deposit fee, fixed part in BDT (default 0)")
	fs.Var(&wdPct, "withdraw-commission-percent", "withdrawal commission, percent of the amount (default 0)")
	fs.Var(&wdFixed, "withdraw-commission-fixed", "withdrawal commission, fixed part in BDT (default 0)")
	depositFees, commissions := methodFees{}, methodFees{}
	fs.Var(depositFees, "deposit-fee", "per-method deposit fee METHOD=PERCENT%[+FIXED], e.g. bkash_agent=1.5%+2; METHOD=default removes it (repeatable); METHOD is "+engine.OneOf(depositMethods()))
	fs.Var(commissions, "withdraw-commission", "per-method withdrawal commission METHOD=PERCENT%[+FIXED], e.g. bank=0.5%+10 (repeatable); METHOD is "+engine.OneOf(engine.PayoutMethods()))
	return func() engine.OrganizationSettings {
		s := engine.OrganizationSettings{
			DepositsEnabled: deposits.v, H2HEnabled: h2h.v, WithdrawalsEnabled: withdrawals.v,
			InstructionsWindow: instructions.v, RedirectWindow: redirect.v,
			DepositFeePercent: depFeePct.v, DepositFeeFixed: depFeeFixed.v,
			WithdrawCommissionPercent: wdPct.v, WithdrawCommissionFixed: wdFixed.v,
			DepositFees: depositFees, WithdrawCommissions: commissions,
		}
		if flagGiven(fs, "name") {
			s.Name = &name
		}
		return s
	}
}

func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// depositMethods are the methods a deposit may name, in either checkout mode.
func depositMethods() []string {
	var out []string
	for _, m := range engine.Methods() {
		if m.IsDeposit() {
			out = append(out, m.Name)
		}
	}
	return out
}

// methodFees is a repeatable METHOD=PERCENT%[+FIXED] flag.
type methodFees map[string]*engine.FeeRule

func (m methodFees) String() string { return "" }

func (m methodFees) Set(s string) error {
	method, rule, ok := strings.Cut(s, "=")
	if !ok || method == "" {
		return fmt.Errorf("want METHOD=PERCENT%%[+FIXED], got %q", s)
	}
	if rule == "default" {
		m[method] = nil
		return nil
	}
	pct, fixed, _ := strings.Cut(rule, "+")
	var r engine.FeeRule
	var err error
	if r.Percent, err = decimal.NewFromString(strings.TrimSuffix(pct, "%")); err != nil || !strings.HasSuffix(pct, "%") {
		return fmt.Errorf("want METHOD=PERCENT%%[+FIXED], got %q", s)
	}
	if fixed != "" {
		if r.Fixed, err = decimal.NewFromString(fixed); err != nil {
			return fmt.Errorf("want METHOD=PERCENT%%[+FIXED], got %q", s)
		}
	}
	m[method] = &r
	return nil
}

// orgView is an organization as admin commands print it.
type orgView struct {
	OrganizationID            string `json:"organization_id"`
	Name                      string `json:"name"`
	DepositsEnabled           bool   `json:"deposits_enabled"`
	H2HEnabled                bool   `json:"h2h_enabled"`
	WithdrawalsEnabled        bool   `json:"withdrawals_enabled"`
	InstructionsWindow        string `json:"instructions_window"`
	RedirectWindow            string `json:"redirect_window"`
	DepositFeePercent         string `json:"deposit_fee_percent"`
	DepositFeeFixed           string `json:"deposit_fee_fixed"`
	WithdrawCommissionPercent string `json:"withdraw_commission_percent"`
	WithdrawCommissionFixed   string `json:"withdraw_commission_fixed"`
	// Per-method rules as "PERCENT%+FIXED", by method.
	DepositFees         map[string]string `json:"deposit_fees,omitempty"`
	WithdrawCommissions map[string]string `json:"withdraw_commissions,omitempty"`
	CreatedAt           string            `json:"created_at"`
}

func ruleText(rules map[string]engine.FeeRule) map[string]string {
	if len(rules) == 0 {
		return nil
	}
	out := map[string]string{}
	for m, r := range rules {
		out[m] = r.Percent.String() + "%+" + engine.FormatAmount(r.Fixed)
	}
	return out
}

func newOrgView(o *engine.Organization) orgView {
	return orgView{
		OrganizationID: o.ID, Name: o.Name,
		DepositsEnabled: o.DepositsEnabled, H2HEnabled: o.H2HEnabled, WithdrawalsEnabled: o.WithdrawalsEnabled,
		InstructionsWindow: o.InstructionsWindow.String(), RedirectWindow: o.RedirectWindow.String(),
		DepositFeePercent: o.DepositFeePercent.String(), DepositFeeFixed: engine.FormatAmount(o.DepositFeeFixed),
		WithdrawCommissionPercent: o.WithdrawCommissionPercent.String(), WithdrawCommissionFixed: engine.FormatAmount(o.WithdrawCommissionFixed),
		DepositFees: ruleText(o.MethodFees.Deposit), WithdrawCommissions: ruleText(o.MethodFees.Withdraw),
		CreatedAt: engine.FormatTime(o.CreatedAt),
	}
}

func orgCreate(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	settings := orgSettingsFlags(fs)
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		creds, err := eng.CreateOrganization(ctx, settings())
		if err != nil {
			return nil, err
		}
		return map[string]string{
			"organization_id": creds.Organization.ID,
			"api_key_id":      creds.APIKey.APIKeyID,
			"api_key":         creds.APIKey.APIKey,
			"signing_secret":  creds.APIKey.SigningSecret,
		}, nil
	}
}

func orgUpdate(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	org := fs.String("org", "", "organization ID")
	settings := orgSettingsFlags(fs)
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		o, err := eng.UpdateOrganization(ctx, *org, settings())
		if err != nil {
			return nil, err
		}
		return newOrgView(o), nil
	}
}

func orgShow(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	org := fs.String("org", "", "organization ID")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		o, err := eng.GetOrganization(ctx, *org)
		if err != nil {
			return nil, err
		}
		return newOrgView(o), nil
	}
}

func orgList(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		orgs, err := eng.ListOrganizations(ctx)
		if err != nil {
			return nil, err
		}
		views := make([]orgView, len(orgs))
		for i, o := range orgs {
			views[i] = newOrgView(o)
		}
		return map[string]any{"organizations": views}, nil
	}
}

// walletView is a receiving wallet as admin commands print it.
type walletView struct {
	WalletID       string  `json:"wallet_id"`
	OrganizationID string  `json:"organization_id"`
	Channel        string  `json:"channel"`
	Operation      string  `json:"operation"`
	Phone          string  `json:"phone"`
	Name           string  `json:"name"`
	QRPayload      string  `json:"qr_payload,omitempty"`
	MinAmount      *string `json:"min_amount"`
	MaxAmount      *string `json:"max_amount"`
	DailyLimit     *string `json:"daily_limit"`
	Enabled        bool    `json:"enabled"`
	LastAssignedAt *string `json:"last_assigned_at"`
	// LiveUntil is set for a wallet proven by an SMS device: it is out of
	// the pool after it unless the device reports.
	LiveUntil *string `json:"live_until,omitempty"`
}

func newWalletView(w *engine.Wallet) walletView {
	amount := func(d decimal.NullDecimal) *string {
		if !d.Valid {
			return nil
		}
		s := engine.FormatAmount(d.Decimal)
		return &s
	}
	v := walletView{
		WalletID: w.ID, OrganizationID: w.OrganizationID, Channel: w.Channel, Operation: w.Operation,
		Phone: w.Phone, Name: w.Name, QRPayload: w.QRPayload,
		MinAmount: amount(w.MinAmount), MaxAmount: amount(w.MaxAmount), DailyLimit: amount(w.DailyLimit),
		Enabled: w.Enabled,
	}
	if w.LastAssignedAt != nil {
		s := engine.FormatTime(*w.LastAssignedAt)
		v.LastAssignedAt = &s
	}
	if w.LiveUntil != nil {
		s := engine.FormatTime(*w.LiveUntil)
		v.LiveUntil = &s
	}
	return v
}

func walletAdd(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	var p engine.AddWalletParams
	fs.StringVar(&p.OrganizationID, "org", "", "organization ID")
	fs.StringVar(&p.Channel, "channel", "", engine.OneOf(engine.WalletChannels()))
	fs.StringVar(&p.Operation, "operation", "", engine.OneOf(engine.WalletOperations())+": cash_out for an agent wallet, make_payment for a merchant wallet")
	fs.StringVar(&p.Phone, "phone", "", "the wallet's Bangladesh mobile number")
	fs.StringVar(&p.Name, "name", "", "name shown to payers")
	fs.StringVar(&p.QRPayload, "qr-payload", "", "QR payload shown to payers (optional)")
	fs.StringVar(&p.MinAmount, "min-amount", "", "smallest deposit this wallet takes (optional)")
	fs.StringVar(&p.MaxAmount, "max-amount", "", "largest deposit this wallet takes (optional)")
	fs.StringVar(&p.DailyLimit, "daily-limit", "", "most this wallet takes per Dhaka day across live deposits (optional)")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		w, err := eng.AddWallet(ctx, p)
		if err != nil {
			return nil, err
		}
		return newWalletView(w), nil
	}
}

func walletList(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	org := fs.String("org", "", "organization ID")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		ws, err := eng.ListWallets(ctx, *org)
		if err != nil {
			return nil, err
		}
		views := make([]walletView, len(ws))
		for i, w := range ws {
			views[i] = newWalletView(w)
		}
		return map[string]any{"wallets": views}, nil
	}
}

func walletEnable(enabled bool) func(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	return func(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
		org := fs.String("org", "", "organization ID")
		wallet := fs.String("wallet", "", "wallet ID")
		return func(ctx context.Context, eng *engine.Engine) (any, error) {
			w, err := eng.SetWalletEnabled(ctx, *org, *wallet, enabled)
			if err != nil {
				return nil, err
			}
			return newWalletView(w), nil
		}
	}
}

func credentialsView(c *engine.APIKeyCredentials) map[string]string {
	return map[string]string{"api_key_id": c.APIKeyID, "api_key": c.APIKey, "signing_secret": c.SigningSecret}
}

func keyCreate(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	org := fs.String("org", "", "organization ID")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		c, err := eng.CreateAPIKey(ctx, *org)
		if err != nil {
			return nil, err
		}
		return credentialsView(c), nil
	}
}

// keyView is an API key as listed: never anything that authenticates.
type keyView struct {
	APIKeyID                string  `json:"api_key_id"`
	Hint                    string  `json:"hint"`
	CreatedAt               string  `json:"created_at"`
	ExpiresAt               *string `json:"expires_at"`
	PreviousSecretExpiresAt *string `json:"previous_signing_secret_valid_until"`
}

func keyList(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	org := fs.String("org", "", "organization ID")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		keys, err := eng.ListAPIKeys(ctx, *org)
		if err != nil {
			return nil, err
		}
		views := make([]keyView, len(keys))
		for i, k := range keys {
			views[i] = keyView{APIKeyID: k.ID, Hint: "..." + k.Hint, CreatedAt: engine.FormatTime(k.CreatedAt)}
			if k.ExpiresAt != nil {
				s := engine.FormatTime(*k.ExpiresAt)
				views[i].ExpiresAt = &s
			}
			if k.PreviousSigningSecret != nil {
				s := engine.FormatTime(k.PreviousSecretExpiresAt)
				views[i].PreviousSecretExpiresAt = &s
			}
		}
		return map[string]any{"api_keys": views}, nil
	}
}

func keyRotate(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	key := fs.String("key", "", "API key ID to replace")
	grace := fs.Duration("grace", 24*time.Hour, "how long the old key keeps working (0 revokes it now)")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		c, err := eng.RotateAPIKey(ctx, *key, *grace)
		if err != nil {
			return nil, err
		}
		out := credentialsView(c)
		out["replaced_api_key_id"] = *key
		return out, nil
	}
}

func keyRevoke(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	key := fs.String("key", "", "API key ID")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		k, err := eng.RevokeAPIKey(ctx, *key)
		if err != nil {
			return nil, err
		}
		return map[string]string{"api_key_id": k.ID, "revoked_at": engine.FormatTime(*k.ExpiresAt)}, nil
	}
}

func signingSecretRotate(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	key := fs.String("key", "", "API key ID whose signing secret to rotate")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		secret, err := eng.RotateSigningSecret(ctx, *key)
		if err != nil {
			return nil, err
		}
		return map[string]string{
			"api_key_id":                          *key,
			"signing_secret":                      secret,
			"previous_signing_secret_valid_until": engine.FormatTime(eng.Now().Add(engine.SigningSecretGrace)),
		}, nil
	}
}

func balanceShow(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	org := fs.String("org", "", "organization ID")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		b, err := eng.GetBalance(ctx, *org)
		if err != nil {
			return nil, err
		}
		return map[string]string{"organization_id": *org, "currency": engine.Currency,
			"available": engine.FormatAmount(b.Available), "held": engine.FormatAmount(b.Held)}, nil
	}
}

func balanceAdjust(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	var p engine.AdjustParams
	fs.StringVar(&p.OrganizationID, "org", "", "organization ID")
	fs.StringVar(&p.Amount, "amount", "", "amount in BDT; negative (\"-250.00\") to debit")
	fs.StringVar(&p.Reason, "reason", "", "why, for the journal (required)")
	fs.StringVar(&p.Actor, "actor", env("USER", "admin"), "who makes the adjustment (default $USER)")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		j, err := eng.AdjustBalance(ctx, p)
		if err != nil {
			return nil, err
		}
		b, err := eng.GetBalance(ctx, p.OrganizationID)
		if err != nil {
			return nil, err
		}
		v := newJournalView(j)
		return map[string]any{"journal": v, "available": engine.FormatAmount(b.Available), "held": engine.FormatAmount(b.Held)}, nil
	}
}

// journalView is a journal as an accountant reads it.
type journalView struct {
	JournalID string      `json:"journal_id"`
	Time      string      `json:"time"`
	Kind      string      `json:"kind"`
	Reference string      `json:"reference,omitempty"`
	Memo      string      `json:"memo"`
	Actor     string      `json:"actor,omitempty"`
	Entries   []entryView `json:"entries"`
}

type entryView struct {
	Account string `json:"account"`
	Amount  string `json:"amount"`
}

func newJournalView(j *engine.Journal) journalView {
	v := journalView{JournalID: j.ID, Time: engine.FormatTime(j.CreatedAt), Kind: j.Kind, Reference: j.Reference, Memo: j.Memo, Actor: j.Actor}
	for _, e := range j.Entries {
		v.Entries = append(v.Entries, entryView{e.Account, engine.FormatAmount(e.Amount)})
	}
	return v
}

// ledgerShow prints the journal. With --json it is one object; otherwise a
// table an accountant can read: one line per entry, debits negative.
func ledgerShow(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	org := fs.String("org", "", "organization ID")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		js, err := eng.ListJournals(ctx, *org)
		if err != nil {
			return nil, err
		}
		b, err := eng.GetBalance(ctx, *org)
		if err != nil {
			return nil, err
		}
		views := make([]journalView, len(js))
		for i, j := range js {
			views[i] = newJournalView(j)
		}
		return ledgerReport{OrganizationID: *org, Journals: views,
			Available: engine.FormatAmount(b.Available), Held: engine.FormatAmount(b.Held)}, nil
	}
}

// ledgerReport prints as a table when not asked for JSON.
type ledgerReport struct {
	OrganizationID string        `json:"organization_id"`
	Journals       []journalView `json:"journals"`
	Available      string        `json:"available"`
	Held           string        `json:"held"`
}

func (r ledgerReport) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight|tabwriter.Debug)
	fmt.Fprintln(tw, "time\tkind\treference\taccount\tamount\tmemo\t")
	for _, j := range r.Journals {
		for _, e := range j.Entries {
			memo := j.Memo
			if j.Actor != "" {
				memo += " (by " + j.Actor + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", j.Time, j.Kind, j.Reference, e.Account, e.Amount, memo)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\navailable %s BDT, held %s BDT\n", r.Available, r.Held)
	return err
}

// endpointView is a webhook endpoint as admin commands print it.
type endpointView struct {
	EndpointID     string  `json:"endpoint_id"`
	OrganizationID string  `json:"organization_id"`
	URL            string  `json:"url"`
	Enabled        bool    `json:"enabled"`
	DisabledReason string  `json:"disabled_reason,omitempty"`
	FailingSince   *string `json:"failing_since"`
	Rotating       bool    `json:"rotating"`
	CreatedAt      string  `json:"created_at"`
}

func newEndpointView(ep *engine.WebhookEndpoint, now time.Time) endpointView {
	v := endpointView{
		EndpointID: ep.ID, OrganizationID: ep.OrganizationID, URL: ep.URL, Enabled: ep.Enabled,
		DisabledReason: ep.DisabledReason, Rotating: ep.PreviousSecret != nil && now.Before(ep.PreviousSecretExpiresAt),
		CreatedAt: engine.FormatTime(ep.CreatedAt),
	}
	if !ep.FailingSince.IsZero() {
		s := engine.FormatTime(ep.FailingSince)
		v.FailingSince = &s
	}
	return v
}

func webhookAdd(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	org := fs.String("org", "", "organization ID")
	url := fs.String("url", "", "absolute http(s) URL that receives the events")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		ep, secret, err := eng.AddWebhookEndpoint(ctx, *org, *url)
		if err != nil {
			return nil, err
		}
		return map[string]string{"endpoint_id": ep.ID, "url": ep.URL, "secret": secret}, nil
	}
}

func webhookList(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	org := fs.String("org", "", "organization ID")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		eps, err := eng.ListWebhookEndpoints(ctx, *org)
		if err != nil {
			return nil, err
		}
		views := make([]endpointView, len(eps))
		for i, ep := range eps {
			views[i] = newEndpointView(ep, eng.Now())
		}
		return map[string]any{"endpoints": views}, nil
	}
}

func webhookRemove(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	id := fs.String("endpoint", "", "endpoint ID")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		if err := eng.RemoveWebhookEndpoint(ctx, *id); err != nil {
			return nil, err
		}
		return map[string]any{"endpoint_id": *id, "removed": true}, nil
	}
}

func webhookEnable(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	id := fs.String("endpoint", "", "endpoint ID")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		ep, err := eng.EnableWebhookEndpoint(ctx, *id)
		if err != nil {
			return nil, err
		}
		return newEndpointView(ep, eng.Now()), nil
	}
}

func webhookRotateSecret(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	id := fs.String("endpoint", "", "endpoint ID")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		secret, err := eng.RotateWebhookSecret(ctx, *id)
		if err != nil {
			return nil, err
		}
		return map[string]string{
			"endpoint_id": *id, "secret": secret,
			"previous_secret_valid_until": engine.FormatTime(eng.Now().Add(engine.WebhookSecretGrace)),
		}, nil
	}
}

func webhookRedeliver(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	event := fs.String("event", "", "event ID (evt_...)")
	endpoint := fs.String("endpoint", "", "endpoint ID; default every enabled endpoint of the event's organization")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		n, err := eng.Redeliver(ctx, *event, *endpoint)
		if err != nil {
			return nil, err
		}
		return map[string]any{"event_id": *event, "queued": n}, nil
	}
}

// eventView is an event with what became of its deliveries.
type eventView struct {
	EventID    string         `json:"event_id"`
	Type       string         `json:"type"`
	ResourceID string         `json:"resource_id"`
	CreatedAt  string         `json:"created_at"`
	Deliveries []deliveryView `json:"deliveries"`
}

type deliveryView struct {
	DeliveryID  string     `json:"delivery_id"`
	EndpointID  string     `json:"endpoint_id"`
	Status      string     `json:"status"`
	Attempts    int        `json:"attempts"`
	NextAttempt *string    `json:"next_attempt_at"`
	LastError   string     `json:"last_error,omitempty"`
	Posts       []postView `json:"posts"`
}

type postView struct {
	At         string `json:"at"`
	StatusCode int    `json:"status_code"`
	Error      string `json:"error,omitempty"`
	Duration   string `json:"duration"`
}

func webhookEvents(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	org := fs.String("org", "", "organization ID")
	limit := fs.Int("limit", 50, "how many of the latest events")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		items, err := eng.ListEventDeliveries(ctx, *org, *limit)
		if err != nil {
			return nil, err
		}
		views := make([]eventView, len(items))
		for i, it := range items {
			v := eventView{EventID: it.Event.ID, Type: it.Event.Type, ResourceID: it.Event.ResourceID, CreatedAt: engine.FormatTime(it.Event.CreatedAt)}
			for _, d := range it.Deliveries {
				dv := deliveryView{DeliveryID: d.ID, EndpointID: d.EndpointID, Status: d.Status, Attempts: d.Attempts, LastError: d.LastError}
				if d.Status == engine.DeliveryPending {
					s := engine.FormatTime(d.NextAttemptAt)
					dv.NextAttempt = &s
				}
				for _, p := range d.Posts {
					dv.Posts = append(dv.Posts, postView{engine.FormatTime(p.AttemptedAt), p.StatusCode, p.Error, p.Duration.Round(time.Millisecond).String()})
				}
				v.Deliveries = append(v.Deliveries, dv)
			}
			views[i] = v
		}
		return map[string]any{"events": views}, nil
	}
}

// auditEntryView is one entry of the audit log.
type auditEntryView struct {
	AuditID string            `json:"audit_id"`
	Time    string            `json:"time"`
	Actor   string            `json:"actor"`
	Action  string            `json:"action"`
	Subject string            `json:"subject"`
	Details map[string]string `json:"details,omitempty"`
}

// auditReport prints as a table when not asked for JSON.
type auditReport struct {
	OrganizationID string           `json:"organization_id"`
	Entries        []auditEntryView `json:"entries"`
}

// auditShow prints an organization's audit log, oldest first.
func auditShow(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	org := fs.String("org", "", "organization ID")
	limit := fs.Int("limit", 0, "only the latest N entries (0: all)")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		es, err := eng.ListAudit(ctx, *org, *limit)
		if err != nil {
			return nil, err
		}
		r := auditReport{OrganizationID: *org, Entries: []auditEntryView{}}
		for _, e := range es {
			r.Entries = append(r.Entries, auditEntryView{
				AuditID: e.ID, Time: engine.FormatTime(e.CreatedAt), Actor: e.Actor, Action: e.Action, Subject: e.Subject, Details: e.Details,
			})
		}
		return r, nil
	}
}

func (r auditReport) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "time\tactor\taction\tsubject\tdetails")
	for _, e := range r.Entries {
		keys := make([]string, 0, len(e.Details))
		for k := range e.Details {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var details []string
		for _, k := range keys {
			details = append(details, k+"="+strconv.Quote(e.Details[k]))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.Time, e.Actor, e.Action, e.Subject, strings.Join(details, " "))
	}
	return tw.Flush()
}

// initView is what payd admin init prints.
type initView struct {
	Database         string `json:"database"`
	Created          bool   `json:"created"`
	MasterKey        string `json:"master_key"`
	MasterKeyCreated bool   `json:"master_key_created"`
	Next             string `json:"next"`
}

func newInitView(sf *storeFlags, db *database) initView {
	return initView{
		Database: redactDSN(sf.db), Created: db.created, MasterKey: db.key, MasterKeyCreated: db.keyCreated,
		Next: "payd serve" + sf.hint() + ", then payd admin org create" + sf.hint() + ` --name "My Shop" --h2h`,
	}
}
