// Package sandbox is payd's test-mode provider, modelled on Stripe's test
// mode: no money moves, every checkout is payd's own hosted page, and the
// outcomes are chosen by whoever plays the payer.
package sandbox

import (
	"context"
	"errors"
	"strings"

	"github.com/payd-engine/payd/engine"
)

// Config configures the sandbox provider.
type Config struct {
	// PublicURL is the externally reachable base URL of the server that
	// serves the hosted checkout page, e.g. "http://localhost:8080".
	PublicURL string
}

// Provider is the sandbox implementation of engine.Provider.
type Provider struct {
	publicURL string
}

var _ engine.Provider = (*Provider)(nil)

// New returns a sandbox provider.
func New(cfg Config) (*Provider, error) {
	if cfg.PublicURL == "" {
		return nil, errors.New("sandbox: PublicURL is required")
	}
	return &Provider{publicURL: strings.TrimRight(cfg.PublicURL, "/")}, nil
}

// StartCheckout points the payer at payd's hosted checkout page for the
// deposit; the token makes the URL unguessable.
func (p *Provider) StartCheckout(_ context.Context, req engine.CheckoutRequest) (*engine.Checkout, error) {
	return &engine.Checkout{URL: p.publicURL + "/checkout/" + req.Token}, nil
}
