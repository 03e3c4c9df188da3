package httpsuite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/payd-engine/payd/engine"
)

// Target is a running deployment of the payd API and the means to
// bootstrap it.
type Target struct {
	// BaseURL is the interface's {base_url}, API prefix included, e.g.
	// "http://127.0.0.1:8080/api".
	BaseURL string
	// Hooks create what the API cannot: organizations, receiving wallets,
	// webhook endpoints and balance adjustments.
	Hooks Hooks

	// Webhooks says whether the deployment can post to a receiver this
	// process runs: a reference server needs --webhook-allow-private for a
	// loopback receiver. When false the webhook checks skip.
	Webhooks bool
	// WebhookListenAddr is where the receiver listens (default
	// "127.0.0.1:0").
	WebhookListenAddr string
	// WebhookURL is the receiver's URL as the deployment reaches it
	// (default "http://" + the listener's address + "/"), e.g. through a
	// tunnel or a host name of a container network.
	WebhookURL string

	// HTTPClient sends the suite's requests (default: 30 s timeout, no
	// redirects followed).
	HTTPClient *http.Client
	// WaitTimeout bounds each wait for background work: a verification, a
	// payout, a webhook delivery (default 30 s).
	WaitTimeout time.Duration
	// PollInterval is the first wait between reads while waiting (default
	// 100 ms; it grows to at most 1 s).
	PollInterval time.Duration
}

// OrgOptions are the settings of an organization the suite creates.
// Deposits are always enabled; fees and commissions are zero.
type OrgOptions struct {
	Name        string
	H2H         bool
	Withdrawals bool
}

// Org is a new organization with its first API key and signing secret.
type Org struct {
	ID            string
	APIKey        string
	SigningSecret string
}

// Hooks bootstrap a deployment: the operations the /v1 API leaves to the
// operator. CLIHooks runs `payd admin`; EngineHooks calls an in-process
// engine.
type Hooks interface {
	CreateOrganization(ctx context.Context, o OrgOptions) (Org, error)
	// AddWallet adds a receiving wallet (channel bkash or nagad, operation
	// cash_out or make_payment) to the organization's pool.
	AddWallet(ctx context.Context, orgID, channel, operation, phone, name string) error
	// AddWebhookEndpoint registers url for the organization's events and
	// returns the endpoint's whsec_ secret.
	AddWebhookEndpoint(ctx context.Context, orgID, url string) (secret string, err error)
	// AdjustBalance credits (or, negative, debits) the organization.
	AdjustBalance(ctx context.Context, orgID, amount, reason string) error
}

// CLIHooks bootstrap any deployment whose database this process can reach,
// by running `payd admin ... --db DB --json`.
type CLIHooks struct {
	// Binary is the payd executable.
	Binary string
	// DB is the deployment's database: a SQLite file path or a postgres://
	// URL, as for `payd serve --db`.
	DB string
	// Env is added to this process's environment for each command, e.g.
	// "PAYD_MASTER_KEY=..." (which a Postgres deployment needs).
	Env []string
}

var _ Hooks = CLIHooks{}

// admin runs one admin command and decodes its JSON output into out.
func (h CLIHooks) admin(ctx context.Context, out any, args ...string) error {
	if h.Binary == "" {
		return errors.New("CLIHooks: Binary is not set")
	}
	args = append(append([]string{"admin"}, args...), "--json")
	if h.DB != "" {
		args = append(args, "--db", h.DB)
	}
	cmd := exec.CommandContext(ctx, h.Binary, args...)
	cmd.Env = append(os.Environ(), h.Env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("payd %s: %w: %s", strings.Join(args[:3], " "), err, strings.TrimSpace(stderr.String()))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		return fmt.Errorf("payd %s: output is not the expected JSON object: %w: %q", strings.Join(args[:3], " "), err, stdout.String())
	}
	return nil
}

// CreateOrganization runs `payd admin org create`.
func (h CLIHooks) CreateOrganization(ctx context.Context, o OrgOptions) (Org, error) {
	args := []string{"org", "create", "--name", o.Name}
	if o.H2H {
		args = append(args, "--h2h")
	}
	if o.Withdrawals {
		args = append(args, "--withdrawals")
	}
	var out struct {
		OrganizationID string `json:"organization_id"`
		APIKey         string `json:"api_key"`
		SigningSecret  string `json:"signing_secret"`
	}
	if err := h.admin(ctx, &out, args...); err != nil {
		return Org{}, err
	}
	if out.OrganizationID == "" || out.APIKey == "" || out.SigningSecret == "" {
		return Org{}, errors.New("payd admin org create: organization_id, api_key or signing_secret missing from the output")
	}
	return Org{ID: out.OrganizationID, APIKey: out.APIKey, SigningSecret: out.SigningSecret}, nil
}

// AddWallet runs `payd admin wallet add`.
func (h CLIHooks) AddWallet(ctx context.Context, orgID, channel, operation, phone, name string) error {
	return h.admin(ctx, nil, "wallet", "add", "--org", orgID, "--channel", channel, "--operation", operation,
		"--phone", phone, "--name", name)
}

// AddWebhookEndpoint runs `payd admin webhook add`.
func (h CLIHooks) AddWebhookEndpoint(ctx context.Context, orgID, url string) (string, error) {
	var out struct {
		Secret string `json:"secret"`
	}
	if err := h.admin(ctx, &out, "webhook", "add", "--org", orgID, "--url", url); err != nil {
		return "", err
	}
	if out.Secret == "" {
		return "", errors.New("payd admin webhook add: secret missing from the output")
	}
	return out.Secret, nil
}

// AdjustBalance runs `payd admin balance adjust`.
func (h CLIHooks) AdjustBalance(ctx context.Context, orgID, amount, reason string) error {
	return h.admin(ctx, nil, "balance", "adjust", "--org", orgID, "--amount", amount, "--reason", reason)
}

// EngineHooks bootstrap an in-process deployment through its engine.
type EngineHooks struct {
	Engine *engine.Engine
}

var _ Hooks = EngineHooks{}

// CreateOrganization calls engine.CreateOrganization.
func (h EngineHooks) CreateOrganization(ctx context.Context, o OrgOptions) (Org, error) {
	name, h2h, withdrawals := o.Name, o.H2H, o.Withdrawals
	creds, err := h.Engine.CreateOrganization(ctx, engine.OrganizationSettings{
		Name: &name, H2HEnabled: &h2h, WithdrawalsEnabled: &withdrawals,
	})
	if err != nil {
		return Org{}, err
	}
	return Org{ID: creds.Organization.ID, APIKey: creds.APIKey.APIKey, SigningSecret: creds.APIKey.SigningSecret}, nil
}

// AddWallet calls engine.AddWallet.
func (h EngineHooks) AddWallet(ctx context.Context, orgID, channel, operation, phone, name string) error {
	_, err := h.Engine.AddWallet(ctx, engine.AddWalletParams{
		OrganizationID: orgID, Channel: channel, Operation: operation, Phone: phone, Name: name,
	})
	return err
}

// AddWebhookEndpoint calls engine.AddWebhookEndpoint.
func (h EngineHooks) AddWebhookEndpoint(ctx context.Context, orgID, url string) (string, error) {
	_, secret, err := h.Engine.AddWebhookEndpoint(ctx, orgID, url)
	return secret, err
}

// AdjustBalance calls engine.AdjustBalance.
func (h EngineHooks) AdjustBalance(ctx context.Context, orgID, amount, reason string) error {
	_, err := h.Engine.AdjustBalance(ctx, engine.AdjustParams{
		OrganizationID: orgID, Amount: amount, Reason: reason, Actor: "httpsuite",
	})
	return err
}
