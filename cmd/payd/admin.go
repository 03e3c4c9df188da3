package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/bkash"
	"github.com/payd-engine/payd/provider/sandbox"
	"github.com/payd-engine/payd/provider/smsinbox"
)

// adminCommand is one "payd admin <noun> <verb>": it declares its flags on
// fs and returns the function that runs it, whose result is printed.
type adminCommand struct {
	summary string
	setup   func(fs *flag.FlagSet) func(ctx context.Context, eng *engine.Engine) (any, error)
	// inbox, instead of setup, declares a command of the SMS inbox provider.
	inbox func(fs *flag.FlagSet) func(ctx context.Context, inbox *smsinbox.Provider) (any, error)
	// refunds marks a command that asks the provider whether it can
	// refund: it takes --provider, the one payd serve runs.
	refunds bool
	// bkash, instead of setup, declares a command of the bKash provider.
	bkash func(fs *flag.FlagSet) func(ctx context.Context, p *bkash.Provider, eng *engine.Engine) (any, error)
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
	"export deposits":       {summary: "stream an organization's deposits in a time range as CSV or JSON lines", setup: exportSetup("deposits")},
	"export withdrawals":    {summary: "stream an organization's withdrawals in a time range as CSV or JSON lines", setup: exportSetup("withdrawals")},
	"export ledger":         {summary: "stream an organization's balance movements in a time range as CSV or JSON lines", setup: exportSetup("ledger")},
	"export refunds":        {summary: "stream an organization's refunds in a time range as CSV or JSON lines", setup: exportSetup("refunds")},
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
	"device config":         {summary: "set a device's silence, its wallets' SIM slots, or a new signing secret (printed once)", inbox: deviceConfig},
	"sms stats":             {summary: "count an organization's SMS by status, and each wallet's held, conflicting and expired ones", inbox: smsStats},
	"sms settings":          {summary: "show or change an organization's SMS inbox settings: payout confirmation, held messages kept", inbox: smsSettings},
	"payout confirm":        {summary: "confirm a payout or refund an SMS matched; it succeeds", inbox: payoutConfirm},
	"sms list":              {summary: "list received SMS: parse results, status, and the deposit each was matched to", inbox: smsList},
	"sms anchor":            {summary: "set the balance a wallet's SMS chain continues from, as the phone shows it", inbox: smsAnchor},
	"sms unmatched":         {summary: "list proven payments (accepted SMS) that credited no deposit, with the deposit each was for", inbox: smsUnmatched},
	"deposit credit":        {summary: "credit a proven late payment to its deposit, once, audited (smsinbox)", inbox: depositCredit},
	"payout list":           {summary: "list the manual payouts and refunds waiting for an operator (smsinbox); a refund names its deposit_id", inbox: payoutList},
	"payout complete":       {summary: "record that you sent a queued payout or refund (--withdrawal takes a refund ID); it succeeds", inbox: payoutComplete},
	"payout fail":           {summary: "record that a queued payout or refund cannot be sent; it fails and its hold is released", inbox: payoutFail},
	"refund create":         {summary: "refund a succeeded deposit (all that is left, or --amount), audited; payd serve's worker sends it", setup: refundCreate, refunds: true},
	"refund list":           {summary: "list an organization's refunds, or a deposit's, newest first", setup: refundList},
	"operator add":          {summary: "add a console operator; prints a one-time setup link", setup: operatorAdd},
	"operator list":         {summary: "list console operators", setup: operatorList},
	"operator disable":      {summary: "stop a console operator from logging in; ends their sessions", setup: operatorDisable},
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
	var runBkash func(context.Context, *bkash.Provider, *engine.Engine) (any, error)
	switch {
	case cmd.bkash != nil:
		runBkash = cmd.bkash(fs)
	case cmd.inbox != nil:
		runInbox = cmd.inbox(fs)
	case cmd.setup != nil:
		runCmd = cmd.setup(fs)
	}
	var providerName *string
	if cmd.refunds {
		providerName = fs.String("provider", env("PAYD_PROVIDER", providerSandbox), "the provider payd serve runs, asked whether it can refund: sandbox or smsinbox (env PAYD_PROVIDER)")
	}
	if fs.Lookup("actor") == nil { // balance adjust declares its own
		fs.String("actor", env("USER", "admin"), "who is acting, recorded in the audit log ($USER if set)")
	}
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: payd admin %s [flags]: %s\n", name, cmd.summary)
		for other, c := range adminCommands { // "ledger" is also the noun of "ledger verify"
			if strings.HasPrefix(other, name+" ") {
				fmt.Fprintf(fs.Output(), "also: payd admin %s: %s\n", other, c.summary)
			}
		}
		fs.PrintDefaults()
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
	// here, except the SMS inbox, which keeps its state in the store, and
	// the provider a refund's create asks (both keep theirs there).
	var provider engine.Provider = noProvider{}
	var inbox *smsinbox.Provider
	if runInbox != nil {
		if inbox, err = smsinbox.New(smsinbox.Config{Store: smsinbox.NewSQLStore(store), Keyring: keyring}); err != nil {
			return err
		}
		provider = inbox
	}
	if providerName != nil {
		switch *providerName {
		case providerSandbox:
			provider, err = sandbox.New(sandbox.Config{Store: store})
		case providerSMSInbox:
			provider, err = smsinbox.New(smsinbox.Config{Store: smsinbox.NewSQLStore(store), Keyring: keyring})
		default:
			err = fmt.Errorf("--provider must be %s or %s, got %q", providerSandbox, providerSMSInbox, *providerName)
		}
		if err != nil {
			return err
		}
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
	case runBkash != nil:
		var p *bkash.Provider
		if p, err = bkash.New(bkash.Config{Store: store, Keyring: keyring}); err == nil {
			out, err = runBkash(ctx, p, eng)
		}
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
